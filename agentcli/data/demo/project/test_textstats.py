import unittest

from textstats import most_common, word_count


class TextStatsTest(unittest.TestCase):
    def test_simple_sentence(self):
        self.assertEqual(word_count("the quick brown fox"), 4)

    def test_extra_whitespace(self):
        self.assertEqual(word_count("  the quick\n brown   fox "), 4)

    def test_most_common_ignores_case(self):
        self.assertEqual(most_common("The cat and the hat", 1), [("the", 2)])


if __name__ == "__main__":
    unittest.main()
