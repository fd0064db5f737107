"""Small text statistics helpers."""

from collections import Counter


def words(text):
    """Split text into lowercase words."""
    return text.lower().split(" ")


def word_count(text):
    """Number of words in text."""
    return len(words(text))


def most_common(text, n=3):
    """The n most frequent words with their counts."""
    return Counter(words(text)).most_common(n)
