"""The recall benchmark's corpus: everyday multi-session conversations with planted facts.

Deterministic (one seed per user), no download. Each user gets 20 sessions of 15 turns about
everyday topics; a few turns state facts, and each question about a fact is worded differently
from it (synonyms, another tense, an indirect reference), needs two sessions, names the date of
a session, or asks about something never said. Every question carries its evidence turns as
(session, turn) pairs; unanswerable ones carry none.
"""
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

SESSIONS, TURNS = 20, 15
NAMES = ["Alex", "Sam", "Priya", "Jonas", "Mei", "Tom", "Aisha", "Lukas", "Rosa", "Kenji",
         "Nora", "Omar"]

# Everyday small talk: (customer line, assistant line) templates with {slots} filled per turn.
SLOTS = {
    "dish": ["lasagne", "a mushroom risotto", "chicken curry", "vegetable stir-fry", "fish tacos",
             "a lentil soup", "beef stew", "pad thai", "a spinach quiche", "pancakes"],
    "place": ["Lisbon", "Kyoto", "the Lake District", "Vienna", "Barcelona", "Copenhagen",
              "the coast", "Edinburgh", "Prague", "Seville"],
    "plant": ["tomatoes", "basil", "roses", "courgettes", "lavender", "strawberries", "chillies"],
    "gadget": ["laptop", "phone", "router", "printer", "smartwatch", "tablet", "headphones"],
    "show": ["a crime drama", "a cooking show", "a nature documentary", "a sitcom",
             "a sci-fi series", "a history podcast"],
    "chore": ["the gutters", "the garage", "the attic", "the windows", "the oven", "the shed"],
    "thing": ["a rain jacket", "running shoes", "a desk lamp", "a coffee grinder", "wool socks",
              "a backpack", "a cast-iron pan", "a yoga mat"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the weekend"],
}
SMALL_TALK = {
    "cooking": [
        ("Any tips for making {dish} less bland?", "Salt in layers, a splash of acid at the end and fresh herbs usually lift {dish}."),
        ("How long can I keep leftover {dish} in the fridge?", "Three to four days in a sealed container; reheat it until it is piping hot."),
        ("Can I freeze {dish}?", "Most of it freezes well for up to three months; thaw it overnight in the fridge."),
        ("What goes well on the side with {dish}?", "A crisp green salad or some crusty bread would balance {dish} nicely."),
        ("I want to cook something quick for dinner on {weekday}, ideas?", "{dish} is quick for a weeknight dinner and easy to cook."),
        ("Is {dish} a good dinner for guests?", "Yes, {dish} is a crowd-pleaser and you can cook it ahead."),
    ],
    "travel": [
        ("What's the best time of year to visit {place}?", "Late spring and early autumn in {place} are mild and less crowded."),
        ("Is {place} walkable or do I need a car?", "Most of {place} is easy on foot, with public transport for longer hops."),
        ("How much cash should I take to {place}?", "Cards work almost everywhere in {place}; a little cash covers small cafes."),
        ("Any food I should try in {place}?", "Try the local market stalls in {place}; street food is often the best value."),
    ],
    "garden": [
        ("My {plant} leaves are turning yellow, why?", "Often it is overwatering or a lack of nitrogen; check the soil drains well."),
        ("When should I plant {plant}?", "After the last frost for most {plant}; start them indoors a few weeks before."),
        ("How often should I water {plant} in summer?", "Deeply two or three times a week is better than a little every day."),
    ],
    "tech": [
        ("My {gadget} keeps freezing, what can I do?", "Restart it, install pending updates and free some storage; that fixes most freezes."),
        ("How do I back up my {gadget}?", "Use the built-in backup to the cloud or to an external drive, and test a restore once."),
        ("Is it worth repairing an old {gadget}?", "If the repair costs less than a third of a new {gadget}, repairing usually pays off."),
    ],
    "tv": [
        ("Can you recommend {show} to watch this {weekday}?", "If you liked the last one, a well-reviewed new season of {show} just came out."),
        ("I'm bored of {show}, any ideas?", "You could switch genre for a while: a documentary or a comedy special."),
    ],
    "home": [
        ("What's the easiest way to clean {chore}?", "Work top to bottom, use warm soapy water and give yourself an afternoon for {chore}."),
        ("I keep putting off sorting {chore}, any motivation tips?", "Set a timer for twenty minutes and stop when it rings; starting is the hard part."),
        ("Do I need a professional for {chore}?", "Usually not, unless it involves ladders over two storeys or electrics."),
    ],
    "shop": [
        ("Do you have {thing} in stock?", "Yes, {thing} is in stock in most sizes and ships within two working days."),
        ("What's your return policy on {thing}?", "You can return {thing} within 14 days if it is unused, with the receipt."),
        ("Is {thing} on sale this week?", "Not this week, but the seasonal sale starts soon and usually includes {thing}."),
        ("How long does delivery take for {thing}?", "Standard delivery is three to five working days; express arrives the next day."),
    ],
    "chat": [
        ("Thanks, that was helpful.", "Glad it helped! Anything else on your mind?"),
        ("I'm having a slow {weekday}, honestly.", "Slow days are allowed. Maybe a short walk would help?"),
        ("What's a good way to unwind after work?", "A walk, some music or a hot shower can help you switch off."),
    ],
}


@dataclass
class Question:
    user: int
    kind: str  # synonym, tense, indirect, two-session, date, unanswerable
    text: str
    evidence: list[tuple[int, int]] = field(default_factory=list)  # (session, turn)


@dataclass
class UserCorpus:
    index: int
    name: str
    sessions: list[list[dict]]  # per session: [{"question", "answer", "created_at"}]
    questions: list[Question]


def pick(rng, options):
    return options[rng.randrange(len(options))]


# One planted fact: (kind, customer line, assistant line, question), filled from `values`.
SINGLE_FACTS = [
    ("synonym", "By the way, I finally bought a {car} last weekend.", "Congratulations on the {car}!",
     "What vehicle did I purchase?", {"car": ["Honda Civic", "Subaru Outback", "Toyota Prius", "Mazda MX-5"]}),
    ("synonym", "My physician says my cholesterol is high, so I'm cutting down on {food}.", "That sounds sensible, good luck with it.",
     "What did my doctor tell me to eat less of?", {"food": ["cheese", "red meat", "butter", "fried food"]}),
    ("synonym", "I work as a {job} at a {work}.", "That sounds like demanding work.",
     "What is my occupation?", {"job": ["nurse", "carpenter", "pharmacist", "bus driver"], "work": ["hospital", "small firm", "depot", "clinic"]}),
    ("synonym", "Our cat {pet} knocked a vase off the shelf again.", "Cats will be cats! Is the vase alright?",
     "What is my kitty called?", {"pet": ["Mochi", "Pepper", "Luna", "Ziggy"]}),
    ("synonym", "I'm allergic to {allergen}, so please never suggest recipes with it.", "Noted, I'll steer clear of it.",
     "Which ingredient gives me a bad reaction?", {"allergen": ["peanuts", "shellfish", "sesame", "kiwi"]}),
    ("synonym", "My favourite film of all time is {film}.", "Great choice, it holds up well.",
     "Which movie do I love most?", {"film": ["Casablanca", "Spirited Away", "Alien", "Amélie"]}),
    ("tense", "I ran the {city} half marathon in {duration}.", "That's a strong time, well done!",
     "How fast do I run a half marathon?", {"city": ["Berlin", "Bristol", "Porto", "Oslo"], "duration": ["1 hour 52", "2 hours 5", "1 hour 47"]}),
    ("tense", "I've been taking {instrument} lessons every Thursday.", "Lovely, it's a rewarding instrument.",
     "Which instrument did I take lessons for?", {"instrument": ["cello", "piano", "trumpet", "ukulele"]}),
    ("tense", "We are repainting the {room} in {colour} this weekend.", "That will look fresh!",
     "What colour did we paint the {room}?", {"room": ["hallway", "bedroom", "kitchen"], "colour": ["sage green", "navy blue", "warm white"]}),
    ("tense", "I'm reading {book} before bed these days.", "That's a good one for winding down.",
     "Which book was I reading at night?", {"book": ["Middlemarch", "The Hobbit", "Dune", "Beloved"]}),
    ("indirect", "We adopted a {breed} puppy and named him {dog}.", "How exciting, puppies are a handful!",
     "What's the new dog called?", {"breed": ["beagle", "collie", "spaniel"], "dog": ["Biscuit", "Rufus", "Otto", "Bramble"]}),
    ("indirect", "My sister {sister} just had a baby girl.", "Congratulations to her and the whole family!",
     "Who in my family became a mother recently?", {"sister": ["Hannah", "Leila", "Marta", "Ines"]}),
    ("indirect", "My landlord finally fixed the {appliance}.", "Good, that took long enough.",
     "What did the person I rent from repair?", {"appliance": ["boiler", "dishwasher", "washing machine", "fridge"]}),
    ("indirect", "I'm putting money aside for a holiday in {country} next spring.", "Saving early is smart.",
     "Which country is my vacation fund for?", {"country": ["Japan", "Peru", "Iceland", "Vietnam"]}),
    ("indirect", "My son {son} starts at {school} in September.", "A big step for him!",
     "Where is my boy going to school?", {"son": ["Leo", "Max", "Noah", "Finn"], "school": ["Hillside Primary", "St Mark's", "Oakfield Academy"]}),
]
# Two sessions each: (first line, second line, question).
PAIRED_FACTS = [
    ("I moved to {city1} for a new job.", "We relocated again, now we live in {city2}.",
     "Which towns have I lived in since changing jobs?", {"city1": ["Leeds", "Utrecht", "Lyon"], "city2": ["York", "Ghent", "Nantes"]}),
    ("My daughter {kid} started {sport} training.", "{kid} scored her first goal at {sport} on Saturday!",
     "What sport is my girl doing, and how is it going?", {"kid": ["Lily", "Ava", "Zoe"], "sport": ["hockey", "football", "netball"]}),
    ("I ordered a {gift} for my dad's birthday.", "The {gift} arrived broken, so I have to send it back.",
     "What present had to be returned, and who was it for?", {"gift": ["watch", "telescope", "record player"]}),
    ("I gave up {treat} in January.", "Two months in and I've lost {kilos} kilos.",
     "How much weight have I dropped since quitting {treat}?", {"treat": ["sugar", "alcohol", "crisps"], "kilos": ["three", "four", "five"]}),
]
DATE_FACT = ("I made {meal} for dinner tonight, it turned out great.", "That sounds delicious!",
             ["mushroom pie", "salmon with rice", "a bean chilli", "roast chicken", "gnocchi",
              "a Thai green curry", "stuffed peppers", "fish pie", "a veggie lasagne",
              "pork dumplings", "a tofu curry", "shepherd's pie"])
UNANSWERABLE = ["What is my brother's name?", "Which football team do I support?",
                "What is my blood type?", "Where did I go to university?",
                "What's my wife's birthday?", "Which bank do I use?", "What size shoes do I wear?"]


def fill(template: str, values: dict) -> str:
    return template.format(**values)


def small_talk_turn(rng, topic: str) -> tuple[str, str]:
    question, answer = pick(rng, SMALL_TALK[topic])
    values = {slot: pick(rng, options) for slot, options in SLOTS.items()}
    return fill(question, values), fill(answer, values)


def build_user(index: int) -> UserCorpus:
    rng = random.Random(1000 + index)
    sessions = []
    start = datetime(2026, 1, 5, 9) + timedelta(days=index)
    for s in range(SESSIONS):
        topics = rng.sample(sorted(SMALL_TALK), 3)
        opened = start + timedelta(days=4 * s + rng.randrange(3), hours=rng.randrange(11),
                                   minutes=rng.randrange(60))
        sessions.append([dict(zip(("question", "answer"), small_talk_turn(rng, pick(rng, topics))),
                              created_at=opened + timedelta(minutes=2 * t)) for t in range(TURNS)])
    questions: list[Question] = []
    used: set[tuple[int, int]] = set()

    def plant(text: str, answer: str, session: int | None = None) -> tuple[int, int]:
        while True:
            where = (rng.randrange(SESSIONS) if session is None else session, rng.randrange(TURNS))
            if where not in used:
                used.add(where)
                sessions[where[0]][where[1]].update(question=text, answer=answer)
                return where

    for kind, line, reply, question, options in rng.sample(SINGLE_FACTS, 12):
        values = {slot: pick(rng, choices) for slot, choices in options.items()}
        where = plant(fill(line, values), fill(reply, values))
        questions.append(Question(index, kind, fill(question, values), [where]))
    for first, second, question, options in rng.sample(PAIRED_FACTS, 3):
        values = {slot: pick(rng, choices) for slot, choices in options.items()}
        early = rng.randrange(SESSIONS // 2)
        a = plant(fill(first, values), "Good to know, thanks for telling me.", early)
        b = plant(fill(second, values), "Thanks for the update!", rng.randrange(early + 1, SESSIONS))
        questions.append(Question(index, "two-session", fill(question, values), [a, b]))
    line, reply, meals = DATE_FACT  # the same kind of fact on seven days: only the date tells
    dinners = [plant(line.format(meal=meal), reply, session)
               for meal, session in zip(rng.sample(meals, len(meals)),
                                        rng.sample(range(SESSIONS), len(meals)))]
    for where in rng.sample(dinners, 2):
        day = sessions[where[0]][where[1]]["created_at"]
        wording = pick(rng, ["What did I cook for dinner on {d:%B} {d.day}?",
                             "What was my evening meal on {d.day} {d:%B}?"])
        questions.append(Question(index, "date", wording.format(d=day), [where]))
    for text in rng.sample(UNANSWERABLE, 3):
        questions.append(Question(index, "unanswerable", text))
    return UserCorpus(index, NAMES[index % len(NAMES)], sessions, questions)


def build(users: int) -> list[UserCorpus]:
    return [build_user(i) for i in range(users)]
