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
    """Round 5's requests (both of its runs): functions asked with and without their signature, classes
    and scripts, in Python and JavaScript."""
    out = _named(R5_TEMPLATES, R5_CLASS_TEMPLATES, ["Python", "JavaScript"], NAMED_FUNCS_R5, NAMED_CLASSES_R5)
    out += _scripts(R5_SCRIPT_TEMPLATES, ["Python", "JavaScript"], SCRIPT_TASKS_R5)
    out += _named(R5_TEMPLATES, R6_CLASS_TEMPLATES, ["Python", "JavaScript"], NAMED_FUNCS_R6, NAMED_CLASSES_R6)
    return out + _scripts(R5_SCRIPT_TEMPLATES, ["Python", "JavaScript"], SCRIPT_TASKS_R6)


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
