"""``toy-fr``: a small English -> French-like language with gold alignments from the generator.

The phenomena that make attention interesting, each with known links:

- the adjective follows the noun: "the black cat" -> "le chat noir" (crossing links);
- negation: "does not eat" -> "ne mange pas" ("not" to both "ne" and "pas"; "does" possibly
  to the verb, which carries its tense and person);
- contraction: "of the garden" -> "du jardin", "to the market" -> "au marché" (two words to one);
- agreement of article, adjective and verb with gender and number ("the black cars" ->
  "les voitures noires");
- questions: inversion with a pronoun subject ("do you see the dog ?" -> "voyez vous le
  chien ?", written without the hyphen so that each word is a token) and "est-ce que"
  otherwise.

Words come from ``LEXICON`` (shown in the app, so users can type their own sentences);
``unknown_words`` says which words of a typed sentence the language does not have.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from attnviz.data import toyfr_lexicon as lx
from attnviz.data.pairs import Pair, make_pair
from attnviz.data.tokenize import Tokenizer

TOKENIZER = Tokenizer("word", lowercase=True)
_VOWELS = "aeiou"

# French token: (word, keys of sure links, keys of possible links); keys name English tokens
FrToken = tuple[str, tuple[str, ...], tuple[str, ...]]


def english_plural(noun: str) -> str:
    if noun in lx.ENGLISH_PLURALS:
        return lx.ENGLISH_PLURALS[noun]
    if noun.endswith(("s", "sh", "ch", "x", "z")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in _VOWELS:
        return noun[:-1] + "ies"
    return noun + "s"


def english_third_person(verb: str) -> str:
    return lx.ENGLISH_THIRD.get(verb) or english_plural(verb)


def french_plural(word: str, adjective: bool = False) -> str:
    table = lx.FRENCH_ADJ_PLURALS if adjective else lx.FRENCH_PLURALS
    if word in table:
        return table[word]
    if word.endswith(("s", "x", "z")):
        return word
    return word + "x" if word.endswith("eau") else word + "s"


def french_adjective(entry: str, gender: str, plural: bool) -> str:
    masc, _, fem = entry.partition("/")
    if gender == "f":
        fem = fem or (masc if masc.endswith("e") else masc + "e")
        return fem + "s" if plural else fem
    return french_plural(masc, adjective=True) if plural else masc


def french_verb(infinitive: str, person: str) -> str:
    forms = lx.IRREGULAR_VERBS.get(infinitive)
    if forms is None:
        stem = infinitive[:-2]
        we = stem + ("eons" if stem.endswith("g") else "ons")
        forms = (stem + "e", we, stem + "ez", stem + "ent")
    return forms[("3s", "1p", "2p", "3p").index(person)]


@dataclass
class NounPhrase:
    det: str  # a key of DETERMINERS
    noun: tuple[str, str, str]  # (english, french, gender)
    plural: bool = False
    adjective: tuple[str, str] | None = None  # (english, french "masc[/fem]")
    of: NounPhrase | None = None  # "the door of the house"


@dataclass
class Clause:
    subject: NounPhrase | str  # a noun phrase or a key of PRONOUNS
    verb: tuple[str, str, str, str]  # (english, english preposition, french infinitive, frame)
    object: NounPhrase | None = None
    preposition: str | None = None  # a key of PREPOSITIONS, with ``place``
    place: NounPhrase | None = None
    negated: bool = False
    question: bool = False

    @property
    def person(self) -> str:
        if isinstance(self.subject, str):
            return lx.PRONOUNS[self.subject][1]
        return "3p" if self.subject.plural else "3s"


def _english_np(np: NounPhrase, key: str) -> list[tuple[str, str]]:
    noun = english_plural(np.noun[0]) if np.plural else np.noun[0]
    first = np.adjective[0] if np.adjective else noun
    det = {"this": "these"}.get(np.det, np.det) if np.plural else np.det
    if np.det == "a":
        det = "some" if np.plural else ("an" if first[0] in _VOWELS else "a")
    out = [(det, key + "det")]
    if np.adjective:
        out.append((np.adjective[0], key + "adj"))
    out.append((noun, key + "noun"))
    if np.of:
        out += [("of", key + "of"), *_english_np(np.of, key + "of.")]
    return out


def _french_np(np: NounPhrase, key: str, particle: str | None = None, particle_key: str = "") -> list[FrToken]:
    """``particle`` ("de" or "à") goes before the article and contracts with le/les."""
    gender = np.noun[2]
    det = lx.DETERMINERS[np.det][2 if np.plural else (0 if gender == "m" else 1)]
    out: list[FrToken] = []
    if particle and (particle, det) in lx.CONTRACTIONS:
        out.append((lx.CONTRACTIONS[particle, det], (particle_key, key + "det"), ()))
    else:
        if particle:
            out.append((particle, (particle_key,), ()))
        out.append((det, (key + "det",), ()))
    out.append((french_plural(np.noun[1]) if np.plural else np.noun[1], (key + "noun",), ()))
    if np.adjective:
        out.append((french_adjective(np.adjective[1], gender, np.plural), (key + "adj",), ()))
    if np.of:
        out += _french_np(np.of, key + "of.", "de", key + "of")
    return out


def render(clause: Clause) -> tuple[list[tuple[str, str]], list[FrToken]]:
    """English tokens with their keys and French tokens with the keys they link to."""
    pronoun = isinstance(clause.subject, str)
    en_subject = [(clause.subject, "s")] if pronoun else _english_np(clause.subject, "s.")
    fr_subject: list[FrToken] = (
        [(lx.PRONOUNS[clause.subject][0], ("s",), ())] if pronoun else _french_np(clause.subject, "s.")
    )
    verb_en, _, verb_fr, _ = clause.verb
    third = clause.person == "3s"
    aux = "does" if third else "do"
    conjugated = french_verb(verb_fr, clause.person)
    if clause.question:
        en = [(aux, "aux"), *en_subject, (verb_en, "v")]
        if pronoun:
            fr = [(conjugated, ("v",), ("aux",)), *fr_subject]
        else:
            fr = [("est-ce", ("aux",), ()), ("que", (), ("aux",)), *fr_subject, (conjugated, ("v",), ())]
    elif clause.negated:
        en = [*en_subject, (aux, "aux"), ("not", "neg"), (verb_en, "v")]
        fr = [*fr_subject, ("ne", ("neg",), ()), (conjugated, ("v",), ("aux",)), ("pas", ("neg",), ())]
    else:
        en = [*en_subject, (english_third_person(verb_en) if third else verb_en, "v")]
        fr = [*fr_subject, (conjugated, ("v",), ())]
    if clause.object:
        en += _english_np(clause.object, "o.")
        fr += _french_np(clause.object, "o.")
    if clause.preposition and clause.place:
        en += [(clause.preposition, "p"), *_english_np(clause.place, "pp.")]
        *words, last = lx.PREPOSITIONS[clause.preposition]
        fr += [(w, ("p",), ()) for w in words]
        if last in ("de", "à"):
            fr += _french_np(clause.place, "pp.", last, "p")
        else:
            fr += [(last, ("p",), ()), *_french_np(clause.place, "pp.")]
    mark = "?" if clause.question else "."
    return [*en, (mark, "end")], [*fr, (mark, ("end",), ())]


def to_pair(clause: Clause) -> Pair:
    """The rendered clause as a ``Pair`` with sure and possible links."""
    en, fr = render(clause)
    where: dict[str, list[int]] = {}
    for i, (_, key) in enumerate(en):
        where.setdefault(key, []).append(i)
    sure = [(i, j) for j, (_, keys, _) in enumerate(fr) for k in keys for i in where.get(k, [])]
    possible = [(i, j) for j, (_, _, keys) in enumerate(fr) for k in keys for i in where.get(k, [])]
    source = TOKENIZER.detokenize([w for w, _ in en])
    target = TOKENIZER.detokenize([w for w, _, _ in fr])
    return make_pair(source, target, TOKENIZER, TOKENIZER, sure, possible)


_Item = TypeVar("_Item")


class _Deck(Generic[_Item]):
    """Draws every item once before any repeats, so a few hundred sentences cover the lexicon."""

    def __init__(self, items: Sequence[_Item], rng: random.Random):
        self.items, self.rng, self.left = list(items), rng, []

    def draw(self) -> _Item:
        if not self.left:
            self.left = self.rng.sample(self.items, len(self.items))
        return self.left.pop()


class _Generator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.nouns = _Deck(lx.NOUNS, self.rng)
        self.adjectives = _Deck(lx.ADJECTIVES, self.rng)
        self.verbs = _Deck(lx.VERBS, self.rng)
        self.pronouns = _Deck(sorted(lx.PRONOUNS), self.rng)

    def noun_phrase(self, dets: Sequence[str] = ("the", "the", "a", "my", "this"), of: float = 0.0) -> NounPhrase:
        r = self.rng
        np = NounPhrase(r.choice(dets), self.nouns.draw(), r.random() < 0.35)
        if r.random() < 0.5:
            np.adjective = self.adjectives.draw()
        if r.random() < of:
            np.of = self.noun_phrase(("the", "my", "this"))
        return np

    def clause(self) -> Clause:
        r = self.rng
        verb = self.verbs.draw()
        question = r.random() < 0.2
        negated = not question and r.random() < 0.3
        subject = self.pronouns.draw() if r.random() < 0.3 else self.noun_phrase(of=0.15)
        clause = Clause(subject, verb, negated=negated, question=question)
        if verb[3] == "trans":
            # French negation wants "pas de" before an indefinite object: keep definite ones
            clause.object = self.noun_phrase(("the", "my", "this") if negated else ("the", "a", "my"), 0.15)
        if verb[3] == "prep":
            clause.preposition, clause.place = verb[1], self.noun_phrase()
        elif r.random() < (0.6 if verb[3] == "intr" else 0.25):
            clause.preposition = r.choice(["in", "on", "under", "behind", "with", "without", "near"])
            # "près de un" would need an elision: keep definite places after "near"
            clause.place = self.noun_phrase(("the", "my", "this") if clause.preposition == "near" else ("the", "a"))
        return clause


def generate(n: int, seed: int = 0) -> list[Pair]:
    """``n`` sentence pairs of toy-fr (duplicates possible; ``load_corpus`` removes them)."""
    gen = _Generator(seed)
    return [to_pair(gen.clause()) for _ in range(n)]


def _lexicon() -> list[dict[str, str]]:
    rows = [{"english": en, "french": fr, "pos": "noun", "gender": g} for en, fr, g in lx.NOUNS]
    rows += [{"english": en, "french": fr, "pos": "adjective", "gender": ""} for en, fr in lx.ADJECTIVES]
    rows += [
        {"english": f"{en} {prep}".strip(), "french": fr, "pos": "verb", "gender": ""} for en, prep, fr, _ in lx.VERBS
    ]
    rows += [{"english": en, "french": fr, "pos": "pronoun", "gender": ""} for en, (fr, _) in lx.PRONOUNS.items()]
    for en, forms in lx.DETERMINERS.items():
        rows.append({"english": en, "french": "/".join(dict.fromkeys(forms)), "pos": "determiner", "gender": ""})
    rows += [
        {"english": en, "french": " ".join(fr), "pos": "preposition", "gender": ""}
        for en, fr in lx.PREPOSITIONS.items()
        if en != "of"
    ]
    rows.append({"english": "of", "french": "de", "pos": "preposition", "gender": ""})
    rows.append({"english": "do/does not", "french": "ne ... pas", "pos": "negation", "gender": ""})
    return rows


LEXICON: list[dict[str, str]] = _lexicon()


def vocabulary() -> set[str]:
    """Every English word form the language uses (inflections included)."""
    words = {"do", "does", "not", "of", "an", "some", "these", ".", "?", *lx.PRONOUNS, *lx.DETERMINERS}
    words |= set(lx.PREPOSITIONS)
    for en, _, _ in lx.NOUNS:
        words |= {en, english_plural(en)}
    words |= {en for en, _ in lx.ADJECTIVES}
    for en, prep, _, _ in lx.VERBS:
        words |= {en, english_third_person(en), *([prep] if prep else [])}
    return words


def unknown_words(text: str) -> list[str]:
    """The words of ``text`` that toy-fr does not have (a model would read them as ``<unk>``)."""
    known = vocabulary()
    return [t for t in TOKENIZER.tokenize(text) if t not in known]


EXAMPLE = "the black cat does not eat the apple of the girl."
