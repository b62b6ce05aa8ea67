"""Function words per language: ``ENGLISH`` for the English path (the ranker and the full-text
terms), ``STOPWORDS`` for the languages ``analysis`` stems.

Short lists of articles, pronouns, prepositions, conjunctions, auxiliaries and question words,
written for this project; no domain vocabulary. Words are folded the way terms are (lower case,
accents stripped), so they are compared after ``retrieval.terms.fold``.
"""

from __future__ import annotations

from memory_substrate.analysis.english import fold


def _words(text: str) -> frozenset[str]:
    return frozenset(fold(w) for w in text.split())


# Words with little retrieval value in questions and chat turns (English). General function words
# and question words only; no domain vocabulary.
ENGLISH: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "couldn",
        "did",
        "didn",
        "do",
        "does",
        "doesn",
        "doing",
        "don",
        "down",
        "during",
        "each",
        "either",
        "else",
        "ever",
        "every",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "got",
        "had",
        "hadn",
        "has",
        "hasn",
        "have",
        "haven",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "however",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "might",
        "mine",
        "more",
        "most",
        "must",
        "mustn",
        "my",
        "myself",
        "neither",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "per",
        "quite",
        "rather",
        "really",
        "same",
        "shall",
        "shan",
        "she",
        "should",
        "shouldn",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "was",
        "wasn",
        "we",
        "were",
        "weren",
        "what",
        "whatever",
        "when",
        "whenever",
        "where",
        "whereas",
        "wherever",
        "whether",
        "which",
        "while",
        "who",
        "whoever",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "without",
        "won",
        "would",
        "wouldn",
        "yet",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "ll",
        "re",
        "ve",
        "s",
        "t",
        "d",
        "m",
        "o",
        "y",
        "yeah",
        "yes",
        "oh",
        "ok",
        "okay",
        "hey",
        "hi",
        "hello",
        "wow",
        "um",
        "uh",
        "lol",
        "haha",
        "thanks",
        "thank",
    ]
)

STOPWORDS: dict[str, frozenset[str]] = {
    "de": _words(
        "der die das den dem des ein eine einen einem einer eines und oder aber doch sondern denn weil "
        "dass ob wenn als wie wo wohin woher wann warum weshalb wieso was wer wen wem wessen welche "
        "welcher welches welchen welchem ich du er sie es wir ihr mich dich sich uns euch mir dir ihm "
        "ihnen mein meine meinen meinem meiner dein deine sein seine seinen seinem seiner ihre ihren "
        "ihrem ihrer unser unsere euer eure in im ins an am auf aus bei mit nach von vom zu zum zur "
        "für um über unter vor hinter neben zwischen durch gegen ohne bis seit ist sind war waren bin "
        "bist sein gewesen hat habe hast haben hatte hatten wird werden wurde wurden worden kann "
        "können konnte soll sollen sollte muss müssen musste darf will wollen wollte mag möchte nicht "
        "kein keine keinen auch noch schon nur sehr so ja nein hier dort da dann jetzt mal man "
        "dieser diese dieses diesen diesem jeder jede jedes alle allem allen"
    ),
    "nl": _words(
        "de het een en of maar want omdat dat als dan wanneer waar waarom wat wie welke welk hoe ik "
        "jij je u hij zij ze wij we jullie mij me hem haar ons hun mijn jouw zijn onze uw in op aan "
        "bij met naar van voor door over onder uit tot om te tegen zonder is ben bent was waren zijn "
        "heb hebt heeft hebben had hadden word wordt worden werd werden kan kunnen kon zal zullen zou "
        "moet moeten mag wil willen niet geen ook nog al alleen zeer zo ja nee hier daar er nu dit "
        "deze die elk elke alle"
    ),
    "sv": _words(
        "en ett den det de och eller men att om när var varför vad vem vilken vilket vilka hur jag du "
        "han hon vi ni mig dig honom henne oss er dem min mitt mina din ditt sin sitt sina vår i på "
        "av för med till från om under över efter före mot utan är var varit har hade blir blev kan "
        "kunde ska skulle måste vill inte ingen också bara så ja nej här där nu denna detta dessa alla"
    ),
    "es": _words(
        "el la los las un una unos unas y o pero porque que si cuando donde adonde como cual cuales "
        "quien quienes qué cuál cuándo dónde adónde cómo por para con sin de del al en a sobre entre "
        "hasta desde yo tú él ella nosotros vosotros ellos ellas me te se nos os le les lo mi mis tu "
        "tus su sus nuestro nuestra es son era eran fue fueron ser estar está están estaba he has ha "
        "hemos han había hay muy más no ni también ya este esta estos estas ese esa eso aquí allí "
        "cada todo todos toda todas"
    ),
    "fr": _words(
        "le la les l un une des du de d et ou mais car donc que qu qui quoi quand où comment pourquoi "
        "quel quelle quels quelles si à au aux en dans sur sous par pour avec sans chez vers entre je "
        "j tu il elle on nous vous ils elles me m te t se s lui leur leurs mon ma mes ton ta tes son "
        "sa ses notre nos votre vos est sont était étaient été être ai as a avons avez ont avait "
        "avaient fait faire ne n pas plus très aussi déjà ce c cet cette ces ceci cela ça ici là "
        "chaque tout tous toute toutes y"
    ),
    "it": _words(
        "il lo la i gli le un uno una e o ma perché che se quando dove come quale quali chi cosa di "
        "del della dei delle a al alla ai da dal in nel nella con su per tra fra io tu lui lei noi "
        "voi loro mi ti si ci vi mio mia miei mie tuo sua suo è sono era erano essere ho hai ha "
        "abbiamo hanno aveva non più molto anche già questo questa questi quello quella qui là ogni "
        "tutto tutti"
    ),
    "pt": _words(
        "o a os as um uma uns umas e ou mas porque que se quando onde como qual quais quem de do da "
        "dos das em no na nos nas por para com sem sobre entre até eu tu ele ela nós vós eles elas me "
        "te se lhe meu minha meus minhas seu sua seus suas é são era eram foi ser estar está estão "
        "tenho tem temos têm havia há muito mais não também já este esta estes estas esse essa isso "
        "aqui ali cada todo todos"
    ),
    "ru": _words(
        "и или но а что чтобы если когда где куда откуда как какой какая какие какое почему зачем "
        "кто кого кому чем в во на с со к ко по о об от до из у за для без под над при через между "
        "я ты он она оно мы вы они меня тебя его её ее нас вас их мне тебе ему ей нам вам им мой моя "
        "моё мои твой твоя наш наша ваш свой своя свои это этот эта эти тот та те был была было были "
        "быть есть будет буду не ни нет да уже ещё еще очень так тоже также только же ли бы здесь там "
        "сейчас каждый все всё весь вся"
    ),
}
