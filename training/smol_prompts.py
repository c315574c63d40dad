"""Varied chat prompts for distilling a general chat target (SmolLM2), built offline from templates.

Kinds: code (Python/JS/SQL/shell functions, fixes, explanations of code), lists/JSON (bullet lists,
steps, JSON objects, tables), prose (explanations, emails, stories, summaries, comparisons).
`prompts(n, seed)` returns n distinct prompts, shuffled, each tagged with its kind.
Nothing is downloaded; the vocabulary below is written by hand.
"""

from __future__ import annotations

import itertools
import random
import re

LANGS = ["Python", "JavaScript", "TypeScript", "Go", "Rust", "C", "Java", "Bash", "SQL", "Ruby", "C++"]
CODE_TASKS = [
    "reverses a string", "checks whether a number is prime", "computes the factorial of n",
    "returns the n-th Fibonacci number", "merges two sorted lists", "removes duplicates from a list",
    "counts the words in a text", "finds the largest element of an array", "sorts a list with bubble sort",
    "implements binary search", "checks whether a string is a palindrome", "reads a CSV file and prints each row",
    "converts Celsius to Fahrenheit", "flattens a nested list", "computes the greatest common divisor",
    "parses a date string", "validates an email address", "counts vowels in a string",
    "transposes a matrix", "computes the mean and median of a list", "generates a random password",
    "sums the digits of a number", "checks whether two strings are anagrams", "finds the second largest number",
    "rotates a list by k positions", "implements a stack class", "implements a queue with two stacks",
    "computes the power set of a set", "converts a decimal number to binary", "capitalizes every word in a sentence",
    "groups words by their first letter", "finds common elements of two lists", "reads a JSON file",
    "writes a dictionary to a JSON file", "downloads nothing but prints the current date", "computes a running total",
    "implements quicksort", "implements merge sort", "counts the frequency of each character",
    "checks whether a year is a leap year", "finds the longest word in a sentence", "chunks a list into pieces of size n",
    # added for the second distillation round (more tasks, so replies are less alike)
    "returns the minimum and maximum of a list", "counts how many times a value appears in a list",
    "removes all whitespace from a string", "checks whether a list is sorted", "returns the last n items of a list",
    "converts a string to title case", "computes the area of a circle",
    "filters out the negative numbers from a list", "computes the sum of a list without using sum",
    "finds the index of an item in a list", "checks whether a string contains only digits",
    "swaps two variables", "prints a multiplication table", "computes the distance between two points",
    "returns the unique words of a sentence in alphabetical order", "counts the lines of a text file",
    "reads a text file and prints its longest line", "converts a list of strings to integers",
    "returns a dictionary of word counts", "implements a linked list", "implements insertion sort",
    "checks whether parentheses in a string are balanced", "converts a Roman numeral to an integer",
    "computes compound interest", "returns every even number up to n", "zips two lists into a dictionary",
    "removes a key from a dictionary if it exists", "merges two dictionaries", "reverses the words in a sentence",
    "counts uppercase and lowercase letters", "computes the nth triangular number", "checks whether a number is a perfect square",
    "finds all divisors of a number", "returns the product of a list of numbers", "formats a number with thousands separators",
    "prints the current time every second five times", "validates a password's strength", "implements a simple calculator",
    "computes the average word length of a sentence", "sorts a list of dictionaries by a key",
]
CODE_TEMPLATES = [
    "Write a {lang} function that {task}.",
    "Write a short {lang} program that {task}.",
    "Show me {lang} code that {task}, with comments.",
    "How do I write a function in {lang} that {task}?",
    "Give an example in {lang} of a function that {task}, and explain it briefly.",
    "Can you write a {lang} snippet that {task}?",
    "Implement a {lang} function that {task}.",
    "I need {lang} code that {task}. Please include an example call.",
    "Please write a {lang} function which {task} and explain how it works.",
    "Create a {lang} utility that {task}.",
]
CODE_EXTRA = [
    "Explain what a Python list comprehension is, with an example.",
    "What is the difference between a list and a tuple in Python? Show code.",
    "Write a SQL query that selects the ten most recent orders from a table called orders.",
    "Write a SQL query that counts users per country.",
    "Write a Python class `Point` with x and y and a method that returns the distance to another point.",
    "Write a Python class `BankAccount` with deposit and withdraw methods.",
    "Explain Python decorators with a simple example.",
    "Write a bash script that counts the lines of every .txt file in a folder.",
    "Write a Python function that uses a dictionary to count word frequencies.",
    "Explain recursion with a Python example.",
    "Write a JavaScript function that fetches JSON from a URL and logs it.",
    "Write a Python generator that yields the squares of numbers up to n.",
    "Show how to open and read a file line by line in Python.",
    "Write a unit test with unittest for a function `add(a, b)`.",
    "Write a Python dataclass `Book` with title, author and year.",
    "Explain what `async` and `await` do in Python, with code.",
    "Write an HTML page with a form that has a name field and a submit button.",
    "Write CSS that centers a div horizontally and vertically.",
    "Fix this Python code: `for i in range(10) print(i)`",
    "What does this code do? `print(sum(x * x for x in range(10)))`",
    "Write a Python function with type hints that returns the average of a list of floats.",
    "Write a regular expression that matches a US phone number, and show how to use it in Python.",
]
TOPICS = [
    "the solar system", "healthy eating", "learning a new language", "the water cycle", "photosynthesis",
    "machine learning", "climate change", "the history of the internet", "time management", "saving money",
    "exercise", "the French Revolution", "volcanoes", "the human heart", "electric cars", "renewable energy",
    "coffee", "sleep", "public speaking", "gardening", "the Roman Empire", "black holes", "recycling",
    "the stock market", "remote work", "dinosaurs", "the moon", "bees", "cloud computing", "chess",
    "travelling on a budget", "writing a resume", "baking bread", "meditation", "the ocean", "rainforests",
    "the printing press", "vaccines", "earthquakes", "smartphones", "democracy", "music theory",
    "the Olympic Games", "friendship", "climate zones", "the periodic table", "cats", "dogs", "tea",
    "a job interview", "starting a small business", "reading more books", "studying for exams",
    "rivers", "the immune system", "mountains", "birds", "the weather", "cooking pasta", "learning to code",
    "open source software", "databases", "the human brain", "astronomy", "ancient Egypt", "penguins",
    "solar panels", "trains", "a healthy morning routine", "painting", "photography", "running a marathon",
]
LIST_TEMPLATES = [
    "List five facts about {topic}.",
    "Give me a bulleted list of tips about {topic}.",
    "What are the main steps to get started with {topic}? Number them.",
    "List the pros and cons of {topic}.",
    "Give me 7 interesting questions about {topic}.",
    "Make a checklist for {topic}.",
    "Return a JSON object with the keys \"topic\", \"summary\" and \"keywords\" for {topic}.",
    "Give me a JSON array of three quiz questions about {topic}, each with \"question\" and \"answer\".",
    "Create a markdown table with two columns, term and definition, for {topic}.",
    "Output a JSON object describing {topic} with a title, a short description and a list of tags.",
]
JSON_EXTRA = [
    "Write a JSON object for a user with name, age, email and a list of hobbies.",
    "Give me a JSON array of five fruits with their colors.",
    "Convert this to JSON: name Alice, age 30, city Paris.",
    "Write a JSON configuration file for a web server with host, port and debug options.",
    "Give me a JSON object that represents a book with title, author, year and genres.",
    "Return a JSON list of three cities with their countries and populations.",
    "Write a YAML file for a simple CI pipeline with build and test steps.",
    "List the days of the week in French as a JSON array.",
    "Give me a shopping list for a week of healthy meals.",
    "List ten common Linux commands and what they do.",
    "List the planets of the solar system in order.",
    "Give me a numbered list of the steps to make a cup of tea.",
]
PROSE_TEMPLATES = [
    "Explain {topic} in simple terms.",
    "Write a short paragraph about {topic}.",
    "Why is {topic} important?",
    "Write a short story that involves {topic}.",
    "Write a short email to a friend about {topic}.",
    "Summarize what everyone should know about {topic}.",
    "Explain {topic} to a ten-year-old.",
    "Write a short blog introduction about {topic}.",
    "What are common misconceptions about {topic}?",
    "Write a haiku and then a short explanation about {topic}.",
]
PROSE_EXTRA = [
    "What is the capital of France, and what is it known for?",
    "How does a computer work?",
    "What is the difference between weather and climate?",
    "Write a thank-you note to a teacher.",
    "Write a polite email asking for a deadline extension.",
    "Describe a sunset at the beach.",
    "What should I consider when buying a laptop?",
    "Tell me a short joke about programmers.",
    "How do airplanes fly?",
    "What is gravity?",
    "Write a short poem about autumn.",
    "Give me advice on how to stay motivated.",
]

# added for the third distillation round: requests that name the function or class and its
# arguments, the way people often ask (none is one of benchmarks/smol_bench.py's prompts)
NAMED_FUNCS = [
    ("reverse_words(sentence)", "returns the sentence with its words in reverse order"),
    ("is_palindrome(s)", "returns True when s reads the same backwards, ignoring case"),
    ("count_vowels(text)", "returns how many vowels the text contains"),
    ("factorial(n)", "returns n! computed with a loop"),
    ("fibonacci(n)", "returns a list of the first n Fibonacci numbers"),
    ("flatten(nested)", "flattens a list of lists into one list"),
    ("chunk(items, size)", "splits a list into lists of at most size items"),
    ("average(numbers)", "returns the mean of a list, or 0 for an empty list"),
    ("max_of_three(a, b, c)", "returns the largest of three numbers without using max"),
    ("celsius_to_fahrenheit(c)", "converts a temperature in Celsius to Fahrenheit"),
    ("is_prime(n)", "returns True when n is a prime number"),
    ("gcd(a, b)", "returns the greatest common divisor of a and b"),
    ("count_words(text)", "returns the number of words in a string"),
    ("unique(items)", "returns the items without duplicates, keeping their order"),
    ("merge_dicts(a, b)", "returns a new dict with the keys of both, b winning on conflicts"),
    ("char_frequency(s)", "returns a dict mapping each character to how often it appears"),
    ("second_largest(numbers)", "returns the second largest number of a list"),
    ("to_binary(n)", "returns the binary representation of a non-negative integer as a string"),
    ("clamp(x, low, high)", "limits x to the range from low to high"),
    ("is_leap_year(year)", "returns True for leap years"),
    ("capitalize_words(text)", "capitalizes the first letter of every word"),
    ("list_to_string(items)", "joins a list of strings with commas"),
    ("find_index(items, value)", "returns the index of value in items, or -1"),
    ("product(numbers)", "returns the product of a list of numbers"),
    ("filter_positive(numbers)", "returns only the positive numbers of a list"),
    ("squares(n)", "returns a list of the squares of the numbers from 1 to n"),
    ("longest_word(sentence)", "returns the longest word of a sentence"),
    ("digits_sum(n)", "returns the sum of the digits of n"),
    ("is_anagram(a, b)", "returns True when a and b are anagrams"),
    ("remove_punctuation(text)", "removes punctuation from a string"),
    ("count_lines(path)", "returns the number of lines in a text file"),
    ("read_json(path)", "loads and returns the contents of a JSON file"),
    ("rotate(items, k)", "rotates a list k positions to the right"),
    ("is_sorted(items)", "returns True when the list is in ascending order"),
    ("title_case(text)", "converts a string to title case"),
    ("multiply_table(n)", "prints the multiplication table of n up to 10"),
    ("safe_divide(a, b)", "divides a by b and returns None when b is zero"),
    ("count_even(numbers)", "counts the even numbers in a list"),
    ("initials(name)", "returns the initials of a full name"),
    ("dedupe_sorted(items)", "removes duplicates from a sorted list in one pass"),
]
NAMED_CLASSES = [
    ("Stack", "push, pop and peek"), ("Queue", "enqueue, dequeue and is_empty"),
    ("Rectangle", "area and perimeter"), ("Circle", "area and circumference"),
    ("Temperature", "to_celsius and to_fahrenheit"), ("TodoList", "add, remove and list_items"),
    ("Timer", "start, stop and elapsed"), ("Student", "add_grade and average"),
    ("Inventory", "add_item, remove_item and total"), ("ShoppingCart", "add, remove and total_price"),
    ("Library", "add_book, find_book and list_books"), ("Vector", "add, dot and length"),
    ("Matrix", "transpose and multiply"), ("Person", "greet and birthday"),
    ("Playlist", "add_song, remove_song and shuffle"), ("Account", "deposit, withdraw and balance"),
]
NAMED_TEMPLATES = [
    "Write a {lang} function `{sig}` that {what}.",
    "Write a {lang} function called `{sig}` that {what}.",
    "Implement `{sig}` in {lang}: it {what}.",
    "In {lang}, write `{sig}`, which {what}. Add a short docstring.",
]
CLASS_TEMPLATES = [
    "Implement a {lang} class `{name}` with methods {methods}.",
    "Write a {lang} class `{name}` that has {methods} methods.",
    "Create a simple {lang} class called `{name}` with {methods}.",
]
NAMED_LANGS = ["JavaScript", "Python", "TypeScript"]

# added for the fourth distillation round: more named functions and classes, and scripts, mostly in
# Python (none is one of benchmarks/smol_bench.py's prompts or a close paraphrase of one)
NAMED_FUNCS_R4 = [
    ("count_chars(text)", "returns the number of characters that are not spaces"),
    ("reverse_list(items)", "returns a new list with the items in reverse order"),
    ("starts_with_vowel(word)", "returns True when the word starts with a vowel"),
    ("percent(part, whole)", "returns part as a percentage of whole, rounded to two decimals"),
    ("word_count(text)", "returns a dict mapping each word to how many times it appears"),
    ("first_letters(words)", "returns a list of the first letter of each word"),
    ("square_roots(numbers)", "returns the square root of each number, skipping negatives"),
    ("even_squares(n)", "returns the squares of the even numbers from 1 to n"),
    ("sum_range(a, b)", "returns the sum of the integers from a to b inclusive"),
    ("repeat_string(s, n)", "returns s repeated n times, separated by spaces"),
    ("longest_string(strings)", "returns the longest string of a list"),
    ("sort_by_length(words)", "returns the words sorted from shortest to longest"),
    ("count_digits(n)", "returns how many digits an integer has"),
    ("is_positive(n)", "returns True when n is greater than zero"),
    ("fahrenheit_to_celsius(f)", "converts a temperature in Fahrenheit to Celsius"),
    ("miles_to_km(miles)", "converts miles to kilometres"),
    ("bmi(weight, height)", "returns the body mass index for a weight in kg and a height in metres"),
    ("grade(score)", "returns the letter grade A to F for a score from 0 to 100"),
    ("vowel_positions(word)", "returns the indexes of the vowels in a word"),
    ("pairs(items)", "returns every pair of neighbouring items as a list of tuples"),
    ("invert_dict(d)", "returns a dict with keys and values swapped"),
    ("keys_with_value(d, value)", "returns the keys of d whose value equals value"),
    ("running_max(numbers)", "returns the running maximum of a list"),
    ("evens_and_odds(numbers)", "returns two lists, the even numbers and the odd ones"),
    ("nth_prime(n)", "returns the n-th prime number"),
    ("primes_up_to(n)", "returns every prime number up to n"),
    ("is_power_of_two(n)", "returns True when n is a power of two"),
    ("hamming(a, b)", "returns the number of positions at which two strings differ"),
    ("caesar(text, shift)", "encrypts text with a Caesar cipher"),
    ("acronym(phrase)", "returns the acronym of a phrase in upper case"),
    ("mode(numbers)", "returns the most common value of a list"),
    ("median(numbers)", "returns the median of a list of numbers"),
    ("normalize(numbers)", "scales a list of numbers to the range 0 to 1"),
    ("dot(a, b)", "returns the dot product of two lists of numbers"),
    ("matrix_sum(m)", "returns the sum of every number in a list of lists"),
    ("diagonal(m)", "returns the main diagonal of a square matrix"),
    ("count_words_in_file(path)", "returns how many words a text file contains"),
    ("read_lines(path)", "returns the lines of a text file without their newlines"),
    ("write_lines(path, lines)", "writes a list of strings to a file, one per line"),
    ("parse_csv_line(line)", "splits a CSV line into its fields"),
    ("greet(name)", "returns a greeting for the given name"),
    ("is_weekend(day)", "returns True for Saturday and Sunday"),
    ("days_between(a, b)", "returns the number of days between two dates"),
    ("seconds_to_hms(seconds)", "converts seconds to hours, minutes and seconds"),
    ("truncate(text, n)", "shortens text to n characters, adding ... when it was longer"),
    ("only_letters(text)", "returns the text with everything but letters removed"),
]
NAMED_CLASSES_R4 = [
    ("Dog", "bark and rename"), ("Car", "start, stop and drive"), ("Book", "summary and is_long"),
    ("Wallet", "add_money, spend and balance"), ("Thermostat", "raise_temp, lower_temp and reading"),
    ("Clock", "tick, reset and time"), ("Scoreboard", "add_point, reset and leader"),
    ("Fraction", "add, multiply and simplify"), ("Employee", "raise_salary and describe"),
    ("Garden", "plant, water and harvest"), ("Die", "roll and history"), ("Light", "turn_on, turn_off and toggle"),
]
SCRIPT_TASKS = [
    "prints the numbers from 1 to 10 and their squares", "prints a countdown from 10 to 1",
    "asks for the user's name and greets them", "prints every even number from 2 to 30",
    "prints the first 15 Fibonacci numbers", "prints a triangle of stars five rows high",
    "prints the multiplication table of 7", "counts from 1 to 50 and prints only the multiples of 7",
    "reads numbers from the user until they type 0 and prints the total",
    "prints the letters of the alphabet with their positions", "prints the prime numbers below 50",
    "simulates rolling a die ten times", "prints the days of the week, one per line",
    "prints the sum of the numbers from 1 to 100", "converts a list of temperatures from Celsius to Fahrenheit",
]
R4_TEMPLATES = [
    "Write a {lang} function `{sig}` that {what}.",
    "Write a {lang} function `{sig}` which {what}.",
    "Please implement `{sig}` in {lang}. It {what}.",
]
R4_CLASS_TEMPLATES = [
    "Implement a {lang} class `{name}` with methods {methods}.",
    "Write a {lang} class `{name}` with {methods} methods.",
]
R4_SCRIPT_TEMPLATES = ["Write a {lang} script that {task}.", "Write a {lang} program that {task}."]

# added for the fifth distillation round (2026-12-06): more functions, asked both with their signature
# and in plain words ("Write a Python function that returns ..."), the way the benchmark's hand-written
# requests are phrased, plus classes and scripts; none is one of benchmarks/smol_bench.py's prompts or a
# close paraphrase of one (no even/odd test, sum of squares or cubes, maximum of an array, FizzBuzz,
# counter class or word-length map)
NAMED_FUNCS_R5 = [
    ("count_consonants(text)", "returns how many consonants a string contains"),
    ("sum_of_evens(numbers)", "returns the sum of the even numbers in a list"),
    ("average_length(words)", "returns the average length of a list of words"),
    ("is_divisible(a, b)", "returns True when a is divisible by b"),
    ("cube(n)", "returns n raised to the power of three"),
    ("absolute_values(numbers)", "returns a list of the absolute values of the numbers"),
    ("first_and_last(items)", "returns a tuple with the first and the last item of a list"),
    ("remove_vowels(text)", "returns the text without its vowels"),
    ("count_spaces(text)", "returns the number of spaces in a string"),
    ("double_all(numbers)", "returns a new list with every number doubled"),
    ("kilograms_to_pounds(kg)", "converts kilograms to pounds"),
    ("hours_to_minutes(hours)", "converts a number of hours to minutes"),
    ("area_of_triangle(base, height)", "returns the area of a triangle"),
    ("perimeter_of_square(side)", "returns the perimeter of a square"),
    ("is_uppercase(text)", "returns True when every letter of the text is upper case"),
    ("count_negatives(numbers)", "returns how many negative numbers a list has"),
    ("replace_spaces(text)", "replaces every space in a string with an underscore"),
    ("last_word(sentence)", "returns the last word of a sentence"),
    ("middle(items)", "returns the middle item of a list"),
    ("smallest(numbers)", "returns the smallest number of a list without using min"),
    ("sum_of_list(numbers)", "returns the sum of a list of numbers using a loop"),
    ("count_occurrences(text, word)", "returns how many times a word appears in a text"),
    ("odd_numbers(n)", "returns a list of the odd numbers from 1 to n"),
    ("multiples(n, limit)", "returns every multiple of n up to limit"),
    ("reverse_number(n)", "returns the digits of an integer in reverse order as an integer"),
    ("is_armstrong(n)", "returns True when n is an Armstrong number"),
    ("to_uppercase(words)", "returns the words of a list in upper case"),
    ("lengths(strings)", "returns a list with the length of each string"),
    ("join_words(words)", "joins a list of words into one sentence with spaces"),
    ("split_sentence(sentence)", "returns the list of words of a sentence"),
    ("key_with_max_value(d)", "returns the key of a dictionary with the largest value"),
    ("sum_dict_values(d)", "returns the sum of the values of a dictionary"),
    ("count_keys(d)", "returns the number of keys in a dictionary"),
    ("list_difference(a, b)", "returns the items of a that are not in b"),
    ("intersection(a, b)", "returns the items that appear in both lists"),
    ("remove_item(items, value)", "removes every occurrence of value from a list"),
    ("insert_sorted(items, value)", "inserts a value into a sorted list, keeping it sorted"),
    ("index_of_max(numbers)", "returns the index of the largest number of a list"),
    ("cumulative_sum(numbers)", "returns the list of running sums"),
    ("power(base, exp)", "returns base raised to exp using a loop"),
    ("sqrt_newton(x)", "returns the square root of x computed with Newton's method"),
    ("distance(x1, y1, x2, y2)", "returns the distance between two points"),
    ("hypotenuse(a, b)", "returns the length of the hypotenuse of a right triangle"),
    ("simple_interest(principal, rate, years)", "returns the simple interest"),
    ("discount(price, percent)", "returns the price after a percentage discount"),
    ("tip(amount, percent)", "returns the tip for a bill"),
    ("age_in_days(years)", "converts an age in years to days"),
    ("minutes_to_hours(minutes)", "converts minutes to hours and minutes"),
    ("is_vowel(char)", "returns True when a character is a vowel"),
    ("alternate_case(text)", "returns the text with its letters alternating between upper and lower case"),
    ("count_letters(text)", "returns a dict mapping each letter to how many times it appears"),
    ("most_common_word(text)", "returns the word that appears most often in a text"),
    ("unique_characters(text)", "returns True when no character appears twice"),
    ("pad_left(text, width)", "pads a string with spaces on the left to a given width"),
    ("strip_numbers(text)", "removes every digit from a string"),
    ("numbers_in_text(text)", "returns the integers found in a string"),
    ("is_number(text)", "returns True when a string is a valid number"),
    ("safe_int(text)", "converts a string to an integer, returning 0 when it cannot"),
    ("merge_lists(a, b)", "returns one list with the items of both lists"),
    ("interleave(a, b)", "returns a list alternating the items of two lists"),
    ("chunk_string(text, n)", "splits a string into pieces of n characters"),
    ("every_other(items)", "returns every second item of a list"),
    ("shuffle_list(items)", "returns the items in random order"),
    ("random_choice(items)", "returns a random item of a list"),
    ("roll_dice(n)", "returns the results of rolling n six-sided dice"),
    ("coin_flip()", "returns heads or tails at random"),
    ("current_year()", "returns the current year"),
    ("file_exists(path)", "returns True when a file exists"),
    ("file_size(path)", "returns the size of a file in bytes"),
    ("append_line(path, line)", "appends a line to a text file"),
    ("count_files(folder)", "returns how many files a folder contains"),
    ("load_csv(path)", "reads a CSV file into a list of dictionaries"),
    ("save_json(path, data)", "writes data to a JSON file"),
    ("word_frequencies(path)", "returns how often each word appears in a text file"),
    ("celsius_list(temps)", "converts a list of Fahrenheit temperatures to Celsius"),
    ("is_valid_username(name)", "returns True when a username has 3 to 12 letters or digits"),
    ("mask_email(email)", "hides all but the first letter of the name part of an email address"),
    ("extract_domain(url)", "returns the domain name of a URL"),
    ("slugify(title)", "turns a title into a lowercase slug with hyphens"),
    ("format_price(amount)", "formats a number as a price with two decimals and a dollar sign"),
]
NAMED_CLASSES_R5 = [
    ("BankAccount", "deposit, withdraw and get_balance"), ("Point", "move and distance_to"),
    ("Animal", "speak and describe"), ("Book", "borrow, give_back and is_available"),
    ("Cat", "meow and sleep"), ("Square", "area and perimeter"), ("Triangle", "area and is_right"),
    ("Calculator", "add, subtract, multiply and divide"), ("Note", "edit and preview"),
    ("Lamp", "switch_on, switch_off and is_on"), ("Recipe", "add_ingredient and show"),
    ("Game", "start, score and end"), ("Team", "add_player, remove_player and size"),
    ("Course", "enroll, drop and students"), ("Battery", "charge, use and level"),
    ("Phone", "call, hang_up and battery"),
]
SCRIPT_TASKS_R5 = [
    "prints the squares of the numbers from 1 to 12", "prints the odd numbers from 1 to 25",
    "asks for two numbers and prints their sum", "prints a right triangle of numbers",
    "prints the even numbers between 10 and 40", "prints the powers of two up to 1024",
    "counts the vowels in a word the user types", "prints the months of the year with their numbers",
    "prints a table of Celsius and Fahrenheit from 0 to 100 in steps of 10",
    "asks for a number and says whether it is positive, negative or zero",
    "prints the characters of a string one per line", "prints the numbers from 20 down to 0 in steps of 2",
    "prints the average of five numbers the user enters", "prints the length of each word in a sentence the user types",
]
R5_TEMPLATES = [
    "Write a {lang} function that {what}.",
    "Write a {lang} function `{sig}` that {what}.",
    "Write a function in {lang} that {what}.",
    "Can you write a {lang} function `{sig}` that {what}?",
]
R5_CLASS_TEMPLATES = [
    "Implement a {lang} class `{name}` with methods {methods}.",
    "Write a {lang} class called `{name}` with {methods} methods.",
]
R5_SCRIPT_TEMPLATES = ["Write a {lang} script that {task}.", "Write a {lang} program that {task}."]

# added for the sixth run (2026-12-06, same round): more classes and scripts, the kinds of request the
# round-5 draft accepted least on (a class with named methods, a printing script), and more functions;
# again none is one of benchmarks/smol_bench.py's prompts or a close paraphrase of one
NAMED_FUNCS_R6 = [
    ("count_above(numbers, limit)", "returns how many numbers are greater than limit"),
    ("sum_of_digits_list(numbers)", "returns the sum of the digits of every number in a list"),
    ("longest_common_prefix(words)", "returns the longest prefix shared by every word"),
    ("remove_duplicates_string(text)", "removes repeated characters from a string, keeping the first"),
    ("is_subset(a, b)", "returns True when every item of a is in b"),
    ("sort_descending(numbers)", "returns the numbers sorted from largest to smallest"),
    ("count_true(flags)", "returns how many values of a list are True"),
    ("first_repeated(items)", "returns the first item that appears twice"),
    ("to_snake_case(name)", "converts a camelCase name to snake_case"),
    ("to_camel_case(name)", "converts a snake_case name to camelCase"),
    ("word_in_text(text, word)", "returns True when a word appears in a text, ignoring case"),
    ("center_text(text, width)", "centers text in a line of a given width"),
    ("repeat_each(items, n)", "returns a list where each item is repeated n times"),
    ("split_even_odd_indexes(items)", "returns the items at even indexes and those at odd indexes"),
    ("number_to_words(n)", "returns the English words for a number from 0 to 99"),
    ("letter_grade_counts(grades)", "returns how many times each letter grade appears"),
    ("average_of_dict(scores)", "returns the average of the values of a dictionary of scores"),
    ("top_n(numbers, n)", "returns the n largest numbers of a list"),
    ("fill_list(n, value)", "returns a list of n copies of value"),
    ("range_list(start, stop, step)", "returns the numbers from start to stop in steps of step"),
    ("max_difference(numbers)", "returns the difference between the largest and the smallest number"),
    ("count_words_longer(text, n)", "returns how many words of a text are longer than n letters"),
    ("is_rotation(a, b)", "returns True when string b is a rotation of string a"),
    ("string_to_list(text)", "returns the characters of a string as a list"),
    ("list_to_set(items)", "returns the distinct items of a list as a set"),
    ("tuple_sum(pairs)", "returns the sum of each pair in a list of tuples"),
    ("count_by_type(items)", "returns how many items of a list are ints, floats and strings"),
    ("temperature_label(c)", "returns cold, mild or hot for a temperature in Celsius"),
    ("ticket_price(age)", "returns the ticket price for an age: children and seniors pay half"),
    ("password_length_ok(password)", "returns True when a password has at least 8 characters"),
]
NAMED_CLASSES_R6 = [
    ("Movie", "rate, describe and is_classic"), ("Robot", "move, turn and report"),
    ("Store", "add_product, sell and stock"), ("Parking", "park, leave and free_spaces"),
    ("Elevator", "go_up, go_down and floor"), ("Order", "add_item, remove_item and total"),
    ("Hotel", "book_room, cancel and available_rooms"), ("Kettle", "fill, boil and pour"),
    ("Plant", "water, grow and height"), ("Piggybank", "save, break_open and total"),
    ("Quiz", "add_question, answer and score"), ("Stopwatch", "start, lap and stop"),
    ("Warehouse", "store, ship and count"), ("Ticket", "book, cancel and is_valid"),
    ("Trip", "add_stop, distance and summary"), ("Address", "format and is_complete"),
    ("Song", "play, pause and duration"), ("Chessboard", "place, remove and is_empty"),
    ("Gradebook", "add_student, add_grade and report"), ("Pet", "feed, play and mood"),
    ("Menu", "add_dish, remove_dish and show"), ("Library", "lend, return_book and overdue"),
    ("Train", "depart, arrive and status"), ("Budget", "add_income, add_expense and remaining"),
]
SCRIPT_TASKS_R6 = [
    "prints the numbers from 1 to 30, writing Even or Odd after each one",
    "prints the numbers from 1 to 25 and marks the primes with a star",
    "prints every number from 1 to 50 that is divisible by both 2 and 5",
    "prints the squares of the numbers from 1 to 10 in a table with two columns",
    "prints a square of hash signs six characters wide",
    "prints a pyramid of numbers five rows high",
    "prints the first ten multiples of 9", "prints the leap years between 2000 and 2050",
    "prints the numbers from 1 to 15 with their cubes", "prints the letters of a word in reverse order",
    "prints the sum and the average of a list of numbers", "prints how many days each month has",
    "reads a name and an age and prints a sentence with both",
    "prints the numbers from 100 down to 1, skipping multiples of 10",
    "prints the first twenty triangular numbers", "prints a calendar row of the days 1 to 31, seven per line",
    "prints each word of a sentence on its own line with its position",
    "prints the numbers from 1 to 40, writing Buzz for multiples of 4",
]
R6_CLASS_TEMPLATES = [
    "Implement a {lang} class `{name}` with methods {methods}.",
    "Write a {lang} class `{name}` with {methods} methods.",
    "Create a {lang} class called `{name}` that has the methods {methods}.",
]

# added for round 7's run (2026-12-06): more functions, classes and scripts of the everyday
# kind (strings, lists, dicts, numbers, dates as strings, validation, small algorithms, matrices as lists
# of lists, recursion); again none is one of benchmarks/smol_bench.py's prompts or a close paraphrase of one
# (no even/odd test, sum of squares or cubes, maximum or minimum of a list, Fizz/Buzz-style replacement,
# counter class or word-length map), and no name repeats an earlier round's
# (appended to the pool, so `prompts(n, seed)` draws differently than before for every seed: what rounds
# 5-7's runs answered is in their packs, training/data/smollm2_r*.npz)
NAMED_FUNCS_R7 = [
    ("is_pangram(sentence)", "checks whether a sentence contains every letter of the alphabet"),
    ("reverse_each_word(sentence)", "reverses the letters of every word but keeps the words in their order"),
    ("compress_string(text)", "compresses runs of repeated characters, so aaabb becomes a3b2"),
    ("expand_string(code)", "expands a string like a3b2 back into aaabb"),
    ("find_all(text, sub)", "returns every index at which a substring starts in a string"),
    ("swap_case(text)", "turns upper-case letters into lower case and lower-case letters into upper case"),
    ("remove_char(text, char)", "returns the string with every occurrence of a given character removed"),
    ("first_non_repeating(text)", "returns the first character that appears only once in a string, or None"),
    ("pig_latin(word)", "converts a word to Pig Latin"),
    ("is_valid_hex_color(code)", "checks whether a string is a hex colour code like #1a2b3c"),
    ("count_sentences(text)", "returns how many sentences a text has, counting the marks . ! and ?"),
    ("word_at(sentence, n)", "returns the n-th word of a sentence, or an empty string when there are fewer words"),
    ("wrap_text(text, width)", "splits a text into lines of at most width characters without breaking words"),
    ("longest_palindrome(text)", "returns the longest palindromic substring of a string"),
    ("reverse_vowels(text)", "reverses the order of the vowels in a string and leaves the other letters in place"),
    ("strip_html_tags(html)", "removes every tag between < and > from a string"),
    ("snake_to_title(name)", "converts a snake_case name to words with capitals, so my_var becomes My Var"),
    ("is_valid_ipv4(address)", "checks whether a string is a valid IPv4 address"),
    ("is_valid_phone(number)", "checks whether a string holds exactly ten digits, ignoring dashes and spaces"),
    ("mask_card(number)", "hides all but the last four digits of a credit card number with asterisks"),
    ("luhn_check(number)", "checks whether a card number passes the Luhn checksum"),
    ("is_valid_zip(code)", "checks whether a string is a five-digit postal code"),
    ("parse_key_values(text)", "turns a string like a=1;b=2 into a dictionary"),
    ("query_string(params)", "builds a URL query string like a=1&b=2 from a dictionary"),
    ("file_extension(filename)", "returns the extension of a file name without the dot, or an empty string"),
    ("vowel_ratio(text)", "returns the share of the letters in a string that are vowels, between 0 and 1"),
    ("double_chars(text)", "returns the string with every character doubled, so abc becomes aabbcc"),
    ("insert_dashes(text)", "puts a dash between every two neighbouring characters of a string"),
    ("longest_run(text)", "returns the length of the longest run of one repeated character in a string"),
    ("count_words_starting_with(text, letter)", "returns how many words of a text start with a given letter"),
    ("censor(text, banned)", "replaces every banned word in a text with asterisks of the same length"),
    ("short_name(full_name)", "shortens a full name to the first name and the last initial, like John S."),
    ("sort_letters(word)", "returns the letters of a word in alphabetical order"),
    ("is_valid_identifier(name)", "checks whether a string is a valid Python variable name"),
    ("count_unique_words(text)", "returns how many different words a text contains, ignoring case"),
    ("add_lists(a, b)", "returns a list with the sums of the items at the same positions of two lists"),
    ("running_average(numbers)", "returns the average of the numbers seen so far at each position of a list"),
    ("moving_average(numbers, k)", "returns the averages of every window of k neighbouring numbers"),
    ("split_at(items, index)", "splits a list into the part before an index and the part from it on"),
    ("find_duplicates(items)", "returns the items that appear more than once in a list"),
    ("two_sum(numbers, target)", "returns the indexes of the two numbers of a list that add up to target"),
    ("missing_number(numbers)", "returns the one number missing from a list that should hold 1 to n"),
    ("is_arithmetic(numbers)", "checks whether the differences between neighbouring numbers are all equal"),
    ("partition(items, predicate)", "splits a list into the items for which a function is true and the rest"),
    ("unzip_pairs(pairs)", "splits a list of pairs into a list of the first items and a list of the second items"),
    ("replace_all(items, old, new)", "returns a list in which every occurrence of old is replaced by new"),
    ("longest_increasing_run(numbers)", "returns the length of the longest stretch of strictly rising numbers"),
    ("selection_sort(items)", "sorts a list with selection sort and returns it"),
    ("counting_sort(numbers)", "sorts a list of small non-negative integers by counting each value"),
    ("sort_by_last_letter(words)", "returns the words sorted by their last letter"),
    ("rank(scores)", "returns the rank of each score in a list, where rank 1 is the best score"),
    ("majority_element(items)", "returns the value that fills more than half of a list, or None"),
    ("rotate_matrix(m)", "rotates a square matrix, given as a list of lists, 90 degrees clockwise"),
    ("matrix_add(a, b)", "adds two matrices given as lists of lists"),
    ("identity_matrix(n)", "returns the n by n identity matrix as a list of lists"),
    ("is_symmetric(m)", "checks whether a square matrix equals its transpose"),
    ("scalar_multiply(m, k)", "multiplies every number of a matrix by k and returns the new matrix"),
    ("spiral_order(m)", "returns the items of a matrix in spiral order, starting at the top left"),
    ("grid_neighbors(grid, row, col)", "returns the values of the up to eight cells around a cell of a grid"),
    ("sort_dict_by_value(d)", "returns the items of a dictionary as a list of pairs sorted by value"),
    ("filter_dict(d, keys)", "returns a dictionary with only the given keys"),
    ("nested_get(d, path)", "follows a list of keys into nested dictionaries and returns the value, or None"),
    ("flatten_dict(d)", "turns nested dictionaries into one dictionary with dotted keys like a.b"),
    ("merge_counts(a, b)", "adds two dictionaries of counts, summing the values of the keys they share"),
    ("is_perfect_number(n)", "checks whether n equals the sum of its proper divisors"),
    ("lcm(a, b)", "returns the least common multiple of two integers"),
    ("prime_factors(n)", "returns the prime factors of n in increasing order"),
    ("collatz_steps(n)", "returns how many steps the Collatz sequence starting at n takes to reach 1"),
    ("binary_to_decimal(bits)", "converts a string of 0s and 1s to an integer"),
    ("to_hex(n)", "returns the hexadecimal form of a non-negative integer without using hex"),
    ("int_to_roman(n)", "converts an integer from 1 to 3999 to a Roman numeral"),
    ("round_to_nearest(x, step)", "rounds a number to the nearest multiple of step"),
    ("quadratic_roots(a, b, c)", "returns the real roots of a quadratic equation as a list"),
    ("is_triangle(a, b, c)", "checks whether three lengths can form a triangle"),
    ("triangle_type(a, b, c)", "returns equilateral, isosceles or scalene for three side lengths"),
    ("cylinder_volume(radius, height)", "returns the volume of a cylinder"),
    ("loan_payment(principal, rate, months)", "returns the fixed monthly payment of a loan"),
    ("percent_change(old, new)", "returns the change from old to new as a percentage"),
    ("combinations_count(n, k)", "returns how many ways there are to choose k items out of n"),
    ("permutations_of(text)", "returns every ordering of the letters of a short string, using recursion"),
    ("sum_nested(nested)", "adds up every number in a list that may contain other lists, using recursion"),
    ("nesting_depth(nested)", "returns how deeply a list is nested, using recursion"),
    ("hanoi(n, source, target, spare)", "returns the moves that solve the Towers of Hanoi for n disks"),
    ("twin_primes(limit)", "returns the pairs of primes below limit that differ by two"),
    ("mean_absolute_deviation(numbers)", "returns the mean absolute deviation of a list of numbers"),
    ("weighted_average(values, weights)", "returns the weighted average of a list of values"),
    ("scale_recipe(ingredients, factor)", "multiplies every amount in a dictionary of ingredients by factor"),
    ("split_bill(total, people, tip_percent)", "returns how much each person pays when a bill is shared, tip included"),
    ("make_change(cents)", "returns the fewest coins of 25, 10, 5 and 1 cents that add up to an amount"),
    ("kmh_to_ms(speed)", "converts a speed in km per hour to metres per second"),
    ("day_of_year(date)", "returns the day number within the year for a date string like 2024-03-01"),
    ("format_date(date)", "turns a date string like 2024-03-01 into 1 March 2024"),
    ("to_24_hour(time)", "converts a time like 2:30 PM to 14:30"),
    ("add_minutes(time, minutes)", "adds minutes to a time string like 09:45 and returns the new time"),
    ("is_valid_date(text)", "checks whether a string in YYYY-MM-DD form is a real date"),
    ("age_from_birthdate(birthdate, today)", "returns a person's age in whole years from two date strings"),
    ("minutes_between(start, end)", "returns the minutes between two times like 08:15 and 17:40"),
    ("quarter_of(date)", "returns the quarter, 1 to 4, of a date string like 2024-08-15"),
    ("is_valid_isbn10(code)", "checks whether a string is a valid ISBN-10"),
    ("is_valid_time(text)", "checks whether a string is a valid time in 24-hour HH:MM form"),
    ("is_binary_string(text)", "checks whether a string contains only 0s and 1s"),
    ("is_valid_sudoku_row(row)", "checks whether a list holds each of the numbers 1 to 9 exactly once"),
    ("extract_hashtags(text)", "returns every word of a text that starts with #"),
    ("extract_emails(text)", "returns every email address found in a text"),
    ("count_paragraphs(text)", "returns how many paragraphs, separated by blank lines, a text has"),
    ("highlight(text, word)", "wraps every occurrence of a word in a text with asterisks"),
    ("bigrams(text)", "returns the pairs of neighbouring words of a text"),
    ("remove_stopwords(text, stopwords)", "returns the text without the words found in a list of stop words"),
    ("reading_time(text)", "returns the minutes needed to read a text at 200 words per minute"),
    ("fill_template(template, values)", "replaces every {name} in a string with the matching value from a dictionary"),
    ("number_lines(text)", "returns the text with a line number in front of each line"),
    ("rock_paper_scissors(a, b)", "returns which of two rock-paper-scissors moves wins, or draw"),
    ("tic_tac_toe_winner(board)", "returns X, O or None for a 3 by 3 tic-tac-toe board"),
    ("to_morse(text)", "translates a text to Morse code"),
    ("atbash(text)", "encodes a text with the Atbash cipher, which maps a to z and b to y"),
    ("binary_gap(n)", "returns the longest run of zeros between ones in the binary form of n"),
    ("count_bits(n)", "returns how many 1 bits the binary form of n has"),
    ("ordinal(n)", "returns a number with its English suffix, like 1st, 2nd, 3rd or 11th"),
    ("plural(word, count)", "returns the word with an s added when count is not 1"),
    ("alphabet_score(word)", "adds up the alphabet positions of the letters of a word, a being 1"),
    ("is_consecutive(numbers)", "checks whether a list holds consecutive integers in any order"),
    ("best_profit(prices)", "returns the best profit from buying once and selling later, given daily prices"),
    ("count_islands(grid)", "returns how many groups of connected 1s a grid of 0s and 1s has"),
    ("bracket_depth(text)", "returns the deepest nesting level of the parentheses in a string"),
    ("frequency_sort(items)", "returns the items sorted by how often they appear, most common first"),
    ("anagram_groups(words)", "groups a list of words into lists of words that are anagrams of each other"),
    ("range_overlap(a, b)", "checks whether two ranges given as (start, end) pairs overlap"),
    ("merge_intervals(intervals)", "merges the overlapping (start, end) intervals of a list"),
    ("product_except_self(numbers)", "returns a list where each item is the product of all the other numbers"),
    ("is_fibonacci(n)", "checks whether n is a Fibonacci number"),
]
NAMED_CLASSES_R7 = [
    ("Contact", "update_phone, update_email and summary"), ("PhoneBook", "add_contact, find and remove"),
    ("Deck", "shuffle, deal and remaining"), ("Card", "is_face_card, color and describe"),
    ("Coin", "flip, heads_count and reset"), ("Polynomial", "evaluate, degree and add"),
    ("ComplexNumber", "add, multiply and modulus"), ("Cylinder", "volume and surface_area"),
    ("Cube", "volume, surface_area and scale"), ("Customer", "add_order, total_spent and is_loyal"),
    ("Invoice", "add_line, subtotal and total_with_tax"), ("PriorityQueue", "push, pop and is_empty"),
    ("Deque", "add_front, add_back, remove_front and remove_back"),
    ("Calendar", "add_event, events_on and remove_event"), ("Alarm", "set_time, snooze and ring"),
    ("TrafficLight", "next_color, current and reset"), ("VendingMachine", "insert_coin, select and refund"),
    ("Bicycle", "pedal, brake and speed"), ("Aquarium", "add_fish, feed and fish_names"),
    ("Diary", "write_entry, read_entry and entries"), ("LRUCache", "get, put and size"),
    ("Grid", "get, set and neighbors"), ("Maze", "is_open, neighbors and solve"),
    ("Money", "add, subtract and format"), ("WeatherLog", "add_reading, average and warmer_than"),
    ("Room", "area, paint_needed and describe"), ("Spaceship", "launch, land and fuel_left"),
    ("Tournament", "add_team, play_match and standings"), ("Flight", "board, depart and seats_left"),
    ("MealPlan", "add_meal, meals_on and shopping_list"), ("Glossary", "add_term, define and terms"),
    ("Bus", "pick_up, drop_off and passengers"), ("Subscription", "renew, cancel and days_left"),
    ("Hexagon", "area, perimeter and scale"), ("BinarySearchTree", "insert, contains and in_order"),
    ("Graph", "add_edge, neighbors and has_path"),
]
SCRIPT_TASKS_R7 = [
    "asks the user for a password twice and says whether the two entries match",
    "plays a guessing game: it picks a number from 1 to 100 and answers each guess with higher or lower",
    "prints a diamond of stars seven rows high", "prints a checkerboard of # and . eight cells wide",
    "prints the ASCII code of every character in a word the user types",
    "asks for a year of birth and prints how old the user turns this year",
    "prints the numbers from 1 to 10 next to their factorials",
    "asks how many items a shopping list has, reads them and prints the list numbered",
    "simulates flipping a coin 100 times and prints how many heads and tails came up",
    "prints the alphabet backwards, from z to a", "prints the hours of a day from 00:00 to 23:00, one per line",
    "prints a hollow rectangle of stars ten wide and four high",
    "asks for the length and the width of a room and prints its floor area in square metres",
    "prints the first ten rows of Pascal's triangle",
    "prints a bar chart of stars for the numbers 3, 7, 2 and 5, one bar per line",
    "asks for an amount in dollars and prints it in euros at a fixed exchange rate",
    "prints today's date and the number of days left until the end of the year",
    "prints every two-letter combination of the letters a, b and c",
    "reads a file name from the user and prints the first five lines of that file",
    "asks three arithmetic questions and prints the user's score at the end",
    "prints a table of the numbers from 1 to 16 in decimal, hexadecimal and binary",
    "asks the user for five names and prints them in alphabetical order",
    "asks for an hour of the day and prints how many hours and minutes remain until then",
    "draws a border of = signs around a message the user types",
    "prints each item of a shopping list with its price and the total at the bottom",
    "asks for a number n and prints an n by n grid of dots",
    "lists the files in the current folder with their sizes in bytes",
    "prints a random quote from a list of five quotes",
    "asks for a hex colour like #ff8800 and prints its red, green and blue values",
    "rolls two dice 1000 times and prints how often each total from 2 to 12 came up",
    "prints the number of seconds in a minute, an hour, a day and a week",
    "shows a to-do menu that lets the user add, show and remove tasks until they quit",
    "asks for a date like 2024-05-17 and prints its day of the week",
    "asks for a word and prints it as a staircase, one more letter on each line",
    "asks two yes-or-no questions and prints a recommendation based on the answers",
    "asks for the hour of the day and prints good morning, good afternoon or good evening",
]


def _named(templates, class_templates, langs, funcs, classes) -> list[str]:
    """Requests that name the function (signature, what it does) or the class (its methods), in every
    template and language: the functions first, then the classes."""
    out = [t.format(lang=l, sig=f, what=w) for t, l, (f, w) in itertools.product(templates, langs, funcs)]
    return out + [t.format(lang=l, name=n, methods=m) for t, l, (n, m) in
                  itertools.product(class_templates, langs, classes)]


def _scripts(templates, langs, tasks) -> list[str]:
    """Requests for a script or program, in every template and language."""
    return [t.format(lang=l, task=k) for t, l, k in itertools.product(templates, langs, tasks)]


def _named_code() -> list[str]:
    """The requests that name a function or class: round 3's, then round 4's (Python first, most people
    ask for it) and round 4's scripts."""
    out = _named(NAMED_TEMPLATES, CLASS_TEMPLATES, NAMED_LANGS, NAMED_FUNCS, NAMED_CLASSES)
    out += _named(R4_TEMPLATES, R4_CLASS_TEMPLATES, ["Python", "JavaScript"], NAMED_FUNCS_R4, NAMED_CLASSES_R4)
    out += _scripts(R4_SCRIPT_TEMPLATES, ["Python", "JavaScript", "Bash"], SCRIPT_TASKS)
    return out + _named_r5()


def _named_r5() -> list[str]:
    """The requests added for rounds 5-7's runs: functions asked with and without their signature,
    classes and scripts, in Python and JavaScript; each round's after the earlier ones' (the pool's
    order is what a seed draws from)."""
    rounds = [(R5_CLASS_TEMPLATES, NAMED_FUNCS_R5, NAMED_CLASSES_R5, SCRIPT_TASKS_R5),
              (R6_CLASS_TEMPLATES, NAMED_FUNCS_R6, NAMED_CLASSES_R6, SCRIPT_TASKS_R6),
              (R6_CLASS_TEMPLATES, NAMED_FUNCS_R7, NAMED_CLASSES_R7, SCRIPT_TASKS_R7)]
    langs, out = ["Python", "JavaScript"], []
    for class_templates, funcs, classes, scripts in rounds:
        out += _named(R5_TEMPLATES, class_templates, langs, funcs, classes)
        out += _scripts(R5_SCRIPT_TEMPLATES, langs, scripts)
    return out


def _kinds():
    code = [t.format(lang=l, task=k) for t, l, k in itertools.product(CODE_TEMPLATES, LANGS, CODE_TASKS)]
    lists = [t.format(topic=p) for t, p in itertools.product(LIST_TEMPLATES, TOPICS)]
    prose = [t.format(topic=p) for t, p in itertools.product(PROSE_TEMPLATES, TOPICS)]
    return {"code": code + CODE_EXTRA + _named_code(), "lists": lists + JSON_EXTRA, "prose": prose + PROSE_EXTRA}


def code_in_other_languages(keep=("Python", "JavaScript")) -> list[str]:
    """The code requests that name a language outside `keep`: what a run whose code should be in those
    languages alone leaves out (round 6: the benchmark's languages)."""
    other = [re.compile(r"\b" + re.escape(lang) + r"\b") for lang in LANGS if lang not in keep]
    return [p for p in _kinds()["code"] if any(r.search(p) for r in other)]


def prompts(n: int, seed: int = 0, share=(0.45, 0.30, 0.25)) -> list[tuple[str, str]]:
    """n (kind, prompt) pairs: code / lists / prose in the given shares, drawn without replacement; the
    hand-written extras and the named-function requests come before the templated rest."""
    rng = random.Random(seed)
    out = []
    first = set(CODE_EXTRA + JSON_EXTRA + PROSE_EXTRA + _named_code())
    for (kind, pool), sh in zip(_kinds().items(), share):
        pool = list(pool)
        rng.shuffle(pool)
        extra = [p for p in pool if p in first]
        rest = [p for p in pool if p not in extra]
        take = (extra + rest)[: max(1, round(n * sh))]
        out += [(kind, p) for p in take]
    rng.shuffle(out)
    return out[:n]


if __name__ == "__main__":
    k = _kinds()
    print({a: len(b) for a, b in k.items()})
    for kind, p in prompts(12):
        print(kind, "|", p)
