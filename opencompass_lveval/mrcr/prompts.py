"""MRCR's texts: MRCR v2's transcript pieces and few-shot examples (eval_hub ``mrcr_utils.py`` at
67b7fd29, byte for byte), and every MRCR prompt as a list of chat messages.

MRCR v2 writes its transcript in one of two styles. Text: ``User: {query}\\n\\nAssistant:
{text}\\n\\n`` per turn and the whole transcript sent as one user message. JSON: the transcript is
the text of a JSON array of messages (each piece escaped by ``json.dumps``, so non-ASCII text
appears as ``\\uXXXX`` escapes), which parses into the messages. OpenAI MRCR's ``prompt`` is such
a JSON array. The follow-up question in transcripts says "in a {style} style" where the queries
say "in {style} style"; the official static examples put a space between hash and text while
answers have none, and their second example asks "in a regal style". All kept: they are what the
models were asked.
"""

from __future__ import annotations

import json

INDEX_NAMES = ('first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth')
TARGET_FEWSHOT_TOKENS = 800  # a drawn few-shot prefix has 750 to 800 tokens
_HEADER = (
    'Here are some examples of conversations succeeded by a follow-up question answered '
    'correctly:\n'
)

# The texts of the official static few-shot examples.
_PIRATE_POEM = (
    "Ahoy, me hearties, gather 'round!\n"
    'Forget the map, the buried ground!\n'
    'The greatest treasure, understand,\n'
    "Is predictin' what the other hand will land!\n"
    'Ye eye yer mate across the cask,\n'
    'A simple question ye must ask:\n'
    'If we split plunder, fair and true,\n'
    'Will he betray, or see it through?\n'
    'He eyes ye back, the salty dog,\n'
    "His mind adrift in thinkin's fog.\n"
    '"If I take all," his brain it hums,\n'
    '"What consequence from him then comes?"\n'
    'Cooperate? Or draw the knife?\n'
    'Depends upon yer pirate life!\n'
    'One wrong move, ye walk the plank, ye see!\n'
    "That's game theory on the briny sea!"
)
_EUROPA_RIDDLE = (
    'Alright class, consider this celestial body:\n'
    'I orbit the preeminent gas giant, yet my own atmosphere is negligible. My visage is a remarkably smooth, albeit fractured, cryosphere. Beneath this icy carapace, however, tidal forces likely maintain a vast, saline hydrosphere – a hidden ocean considered a prime candidate in our astrobiological inquiries.\n'
    'What am I?\n'
    '\n'
    '... Europa'
)
_REGAL_TWEETS = (
    'Hark! The world is oft adorned with phantoms – mere tricks of light and shadow that beguile the unwary eye. True sight, like true sovereignty, pierces the veil. Be not swayed by gilded appearances; discern the substance beneath the shimmer. #RegalWisdom #Illusions #Discernment',
    'Hark! Let it be known that the eye may oft be deceived by artifice and glamour. Mere phantoms dance where substance ought reside. A discerning sovereign looks beyond the gilded façade to perceive the unvarnished truth. Trust not the shimmer; seek the core. #RegalInsight #Illusions #TruthPrevails',
)


def escape_for_json(text: str) -> str:
    """``text`` as the inside of a JSON string (``json.dumps``, ASCII only, without quotes)."""
    return json.dumps(text)[1:-1]


def write_query(fmt: str, topic: str, style: str) -> str:
    """The user's request that precedes each text."""
    return f'Write a {fmt} about {topic} in {style} style.'


def turn_text(query: str, text: str, json_style: bool) -> str:
    """One exchange as the transcript holds it."""
    if json_style:
        return (
            f'{{"role": "user", "content": "{escape_for_json(query)}"}}, {{"role": "assistant", '
            f'"content": "{escape_for_json(text)}"}}, '
        )
    return f'User: {query}\n\nAssistant: {text}\n\n'


def follow_up(random_hash: str, index_name: str, fmt: str, topic: str, style: str) -> str:
    """The final question of a transcript (the few-shot examples add a space after it)."""
    return (
        f'User: Prepend {random_hash} to the {index_name} {fmt} about {topic} in a {style} style. '
        'Do not include any other text in your response.\n\nAssistant:'
    )


def final_query(question: str, json_style: bool) -> str:
    """The follow-up question as it ends the transcript (closing the array in JSON style)."""
    return (
        f'{{"role": "user", "content": "{escape_for_json(question)}"}}]' if json_style else question
    )


def fewshot_text(example_one: str, example_two: str, json_style: bool) -> str:
    """The few-shot prefix around two examples: numbered 1 and 2 then an open ``EXAMPLE 3`` the
    transcript fills (text style), or two unnumbered examples (JSON style)."""
    if json_style:
        number, closing = ('', '')
    else:
        number, closing = (' {}', '======== EXAMPLE 3 ========\n\n')
    one, two = number.format(1), number.format(2)
    return (
        f'{_HEADER}======== EXAMPLE{one} ========\n\n{example_one}\n\n======== END EXAMPLE{one} '
        f'========\n\n======== EXAMPLE{two} ========\n\n{example_two}\n\n======== END EXAMPLE{two} '
        f'========\n\n{closing}'
    )


def json_prefix(fewshot: str) -> str:
    """A few-shot prefix as the first message of a JSON-style transcript."""
    return f'[{{"role": "user", "content": "{escape_for_json(fewshot)}"}}, '


def _static_examples() -> tuple[str, str]:
    """The official static examples: two requests then the first poem asked back; two tweets
    of one request then the second asked back (a space between hash and text, here only)."""
    poem_query = write_query('poem', 'game theory', 'pirate')
    tweet_query = 'Write a tweet about illusions in a regal style.'  # "in a", unlike the rest
    one = (
        turn_text(poem_query, _PIRATE_POEM, False)
        + turn_text(write_query('riddle', 'Europa', 'professorial'), _EUROPA_RIDDLE, False)
        + follow_up('b6Yath1qpbUa', 'first', 'poem', 'game theory', 'pirate')
        + f' b6Yath1qpbUa {_PIRATE_POEM}'
    )
    two = (
        turn_text(tweet_query, _REGAL_TWEETS[0], False)
        + turn_text(tweet_query, _REGAL_TWEETS[1], False)
        + follow_up('GIJBqhDo2IpT', 'second', 'tweet', 'illusions', 'regal')
        + f' GIJBqhDo2IpT {_REGAL_TWEETS[1]}'
    )
    return one, two


FEW_SHOT_PREFIX = fewshot_text(*_static_examples(), json_style=False)
FEW_SHOT_PREFIX_JSON = fewshot_text(*_static_examples(), json_style=True)


ROLES = ('system', 'user', 'assistant')
_JSON_START = '[{"role": '


def chat_messages(prompt: str) -> list[dict]:
    """The messages of a JSON array of ``{"role", "content"}`` objects (OpenAI MRCR's
    ``prompt``, a JSON-style MRCR v2 transcript); a ValueError saying what is wrong otherwise."""
    try:
        messages = json.loads(prompt)
    except ValueError as exc:
        raise ValueError(f'the prompt is not a JSON array of messages ({exc})') from None
    if not isinstance(messages, list) or not messages:
        raise ValueError('the prompt must be a non-empty JSON array of messages')
    for number, message in enumerate(messages, 1):
        if not (
            isinstance(message, dict)
            and message.get('role') in ROLES
            and isinstance(message.get('content'), str)
        ):
            raise ValueError(
                f'message {number} must be an object with a "role" ({", ".join(ROLES)}) and a '
                'string "content"'
            )
    return [{'role': m['role'], 'content': m['content']} for m in messages]


def v2_messages(queries: str) -> list[dict]:
    """An MRCR v2 row's ``queries`` as messages: a JSON-style transcript parsed into its turns, a
    text-style one (the files download.sh gives) as the one user message GDM's script sends."""
    if queries.startswith(_JSON_START):
        return chat_messages(queries)
    return [{'role': 'user', 'content': queries}]
