"""The words of the ``toy-fr`` language: English base form, French form, part of speech, gender.

French nouns and verbs all start with a consonant, so that no elision (``l'``, ``n'``, ``d'``)
glues two words into one token. Irregular inflections are listed; the rest follow the rules
in ``toyfr.py``.
"""

from __future__ import annotations

_NOUNS_M = """
cat:chat dog:chien boy:garçon horse:cheval book:livre garden:jardin market:marché boat:bateau
cake:gâteau hat:chapeau bike:vélo train:train truck:camion piano:piano pen:stylo notebook:cahier
bed:lit sofa:canapé cheese:fromage bread:pain fish:poisson chicken:poulet rabbit:lapin wolf:loup
fox:renard monkey:singe snake:serpent tiger:tigre lion:lion pig:cochon sheep:mouton bull:taureau
neighbour:voisin doctor:médecin teacher:professeur soldier:soldat king:roi prince:prince
fisherman:pêcheur baker:boulanger farmer:fermier musician:musicien painter:peintre
village:village castle:château bridge:pont path:chemin wall:mur roof:toit park:parc
museum:musée restaurant:restaurant shop:magasin office:bureau toy:jouet ball:ballon
knife:couteau glass:verre coffee:café bag:sac coat:manteau mirror:miroir painting:tableau
newspaper:journal gift:cadeau cloud:nuage sun:soleil river:fleuve lake:lac field:champ
brother:frère father:père friend:copain
"""
_NOUNS_F = """
girl:fille woman:femme mother:mère sister:sœur aunt:tante queen:reine house:maison apple:pomme
table:table chair:chaise door:porte window:fenêtre car:voiture street:rue city:ville
forest:forêt mountain:montagne beach:plage stream:rivière flower:fleur letter:lettre lamp:lampe
cup:tasse bottle:bouteille soup:soupe salad:salade pie:tarte carrot:carotte banana:banane
cherry:cerise hen:poule cow:vache goat:chèvre mouse:souris frog:grenouille turtle:tortue
whale:baleine dress:robe shirt:chemise shoe:chaussure key:clé box:boîte radio:radio
guitar:guitare song:chanson photo:photo map:carte doll:poupée candle:bougie kitchen:cuisine
bedroom:chambre station:gare bank:banque square:place hill:colline road:route moon:lune
tower:tour party:fête cousin:cousine
"""
_ADJECTIVES = """
black:noir white:blanc/blanche red:rouge green:vert blue:bleu yellow:jaune grey:gris brown:brun
pink:rose big:grand small:petit old:vieux/vieille young:jeune new:nouveau/nouvelle
beautiful:beau/belle pretty:joli ugly:laid good:bon/bonne bad:mauvais happy:heureux/heureuse
sad:triste tired:fatigué hungry:affamé clean:propre dirty:sale hot:chaud cold:froid heavy:lourd
light:léger/légère strong:fort fast:rapide slow:lent calm:calme noisy:bruyant rich:riche
poor:pauvre kind:gentil/gentille funny:drôle strange:bizarre famous:célèbre round:rond
long:long/longue short:court soft:doux/douce sweet:sucré empty:vide full:plein wet:mouillé
dry:sec/sèche broken:cassé fresh:frais/fraîche lazy:paresseux/paresseuse brave:courageux/courageuse
proud:fier/fière fat:gros/grosse
"""
# transitive verbs: they take a direct object
_VERBS_T = """
eat:manger watch:regarder find:trouver carry:porter wash:laver keep:garder push:pousser pull:tirer
touch:toucher count:compter draw:dessiner hide:cacher break:casser close:fermer show:montrer
visit:visiter prepare:préparer repair:réparer taste:goûter cut:couper chase:chasser brush:brosser
decorate:décorer win:gagner deliver:livrer cook:cuisiner see:voir take:prendre read:lire
sell:vendre follow:suivre drink:boire paint:peindre want:vouloir
"""
# intransitive verbs: an optional place follows
_VERBS_I = """
sleep:dormir sing:chanter dance:danser walk:marcher work:travailler play:jouer swim:nager
run:courir laugh:rire cry:pleurer jump:sauter
"""
# verbs with a preposition: English verb and preposition, French verb (French preposition: à)
_VERBS_P = "speak_to:parler go_to:aller come_to:venir reply_to:répondre think_of:penser talk_to:causer"

IRREGULAR_VERBS = {  # 3rd singular, we, you, 3rd plural
    "voir": ("voit", "voyons", "voyez", "voient"),
    "prendre": ("prend", "prenons", "prenez", "prennent"),
    "lire": ("lit", "lisons", "lisez", "lisent"),
    "vendre": ("vend", "vendons", "vendez", "vendent"),
    "suivre": ("suit", "suivons", "suivez", "suivent"),
    "boire": ("boit", "buvons", "buvez", "boivent"),
    "peindre": ("peint", "peignons", "peignez", "peignent"),
    "vouloir": ("veut", "voulons", "voulez", "veulent"),
    "dormir": ("dort", "dormons", "dormez", "dorment"),
    "courir": ("court", "courons", "courez", "courent"),
    "rire": ("rit", "rions", "riez", "rient"),
    "aller": ("va", "allons", "allez", "vont"),
    "venir": ("vient", "venons", "venez", "viennent"),
    "répondre": ("répond", "répondons", "répondez", "répondent"),
}
ENGLISH_PLURALS = {
    "fish": "fish",
    "sheep": "sheep",
    "mouse": "mice",
    "woman": "women",
    "wolf": "wolves",
    "knife": "knives",
    "piano": "pianos",
    "photo": "photos",
    "radio": "radios",
}
ENGLISH_THIRD = {"go": "goes", "do": "does"}
FRENCH_PLURALS = {"journal": "journaux", "cheval": "chevaux", "œil": "yeux"}
FRENCH_ADJ_PLURALS = {"vieux": "vieux", "nouveau": "nouveaux", "beau": "beaux", "gros": "gros"}

PRONOUNS = {  # English: (French, person)
    "he": ("il", "3s"),
    "she": ("elle", "3s"),
    "we": ("nous", "1p"),
    "you": ("vous", "2p"),
    "they": ("ils", "3p"),
}
DETERMINERS = {  # English: French (masc sg, fem sg, plural)
    "the": ("le", "la", "les"),
    "a": ("un", "une", "des"),
    "my": ("mon", "ma", "mes"),
    "this": ("ce", "cette", "ces"),
}
PREPOSITIONS = {  # English: French words; a final "de"/"à" contracts with le/les
    "in": ("dans",),
    "on": ("sur",),
    "under": ("sous",),
    "behind": ("derrière",),
    "with": ("avec",),
    "without": ("sans",),
    "near": ("près", "de"),
    "to": ("à",),
    "of": ("à",),  # "think of" -> "penser à"
}
CONTRACTIONS = {("de", "le"): "du", ("de", "les"): "des", ("à", "le"): "au", ("à", "les"): "aux"}


def _entries(text: str) -> list[tuple[str, str]]:
    return [tuple(item.split(":", 1)) for item in text.split()]


NOUNS = [(en, fr, "m") for en, fr in _entries(_NOUNS_M)] + [(en, fr, "f") for en, fr in _entries(_NOUNS_F)]
ADJECTIVES = _entries(_ADJECTIVES)  # (english, "masc" or "masc/fem")
VERBS = (
    [(en, "", fr, "trans") for en, fr in _entries(_VERBS_T)]
    + [(en, "", fr, "intr") for en, fr in _entries(_VERBS_I)]
    + [(*en.split("_"), fr, "prep") for en, fr in _entries(_VERBS_P)]
)
