"""Varied chat prompts for distilling a general chat target (SmolLM2), built offline from templates.

Kinds: code (Python/JS/SQL/shell functions, fixes, explanations of code), lists/JSON (bullet lists,
steps, JSON objects, tables), prose (explanations, emails, stories, summaries, comparisons).
`prompts(n, seed)` returns n distinct prompts, shuffled, each tagged with its kind.
Nothing is downloaded; the vocabulary below is written by hand.
"""

from __future__ import annotations

import itertools
import random

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


def _named(templates, class_templates, langs, funcs, classes) -> list[str]:
    """Requests that name the function (signature, what it does) or the class (its methods), in every
    template and language: the functions first, then the classes."""
    out = [t.format(lang=l, sig=f, what=w) for t, l, (f, w) in itertools.product(templates, langs, funcs)]
    return out + [t.format(lang=l, name=n, methods=m) for t, l, (n, m) in
                  itertools.product(class_templates, langs, classes)]


def _named_code() -> list[str]:
    """The requests that name a function or class: round 3's, then round 4's (Python first, most people
    ask for it) and round 4's scripts."""
    out = _named(NAMED_TEMPLATES, CLASS_TEMPLATES, NAMED_LANGS, NAMED_FUNCS, NAMED_CLASSES)
    out += _named(R4_TEMPLATES, R4_CLASS_TEMPLATES, ["Python", "JavaScript"], NAMED_FUNCS_R4, NAMED_CLASSES_R4)
    return out + [t.format(lang=l, task=k) for t, l, k in
                  itertools.product(R4_SCRIPT_TEMPLATES, ["Python", "JavaScript", "Bash"], SCRIPT_TASKS)]


def _kinds():
    code = [t.format(lang=l, task=k) for t, l, k in itertools.product(CODE_TEMPLATES, LANGS, CODE_TASKS)]
    lists = [t.format(topic=p) for t, p in itertools.product(LIST_TEMPLATES, TOPICS)]
    prose = [t.format(topic=p) for t, p in itertools.product(PROSE_TEMPLATES, TOPICS)]
    return {"code": code + CODE_EXTRA + _named_code(), "lists": lists + JSON_EXTRA, "prose": prose + PROSE_EXTRA}


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
