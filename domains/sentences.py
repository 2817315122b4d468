"""Telling a domain's own feedback apart from free text (an LLM critique), for choosing a backprompt wrapper."""

from __future__ import annotations

import re


def only_sentences(sentence: re.Pattern[str], text: str) -> bool:
    """Whether non-empty `text` is nothing but matches of `sentence`, separated by whitespace.

    Scanned sentence by sentence from left to right, so a long hostile critique costs linear time.
    """
    pos = 0
    while pos < len(text):
        match = sentence.match(text, pos)
        if not match or match.end() == pos:
            return False
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return bool(text)
