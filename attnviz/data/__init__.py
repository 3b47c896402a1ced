"""Data: tokenizers, vocabularies, built-in tasks with gold alignments and real corpora."""
