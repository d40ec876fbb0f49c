"""The recall benchmark's corpus: long, noisy multi-session conversations, as people really chat.

Deterministic (one seed per user), no download. What real conversations do to a ranking, and
this corpus reproduces:
- turns are long and carry several topics at once: a greeting, an aside about the cat, a parcel
  that is late, and somewhere in the middle the one sentence a later question is about;
- every person has several pets, several orders and several trips, each talked about in many
  sessions, so a question about one of them has dozens of near misses sharing its words;
- chit-chat turns ("thanks, that was helpful") that match any casual question;
- questions asked as they come: some share the evidence's rare words (a pet's name, an order
  number), some say the same thing in other words (paraphrase), some need two sessions, name a
  date or ask what the assistant said, and some ask about something never said (unanswerable).
Every question carries its evidence turns as (session, turn) pairs; unanswerable ones none.
"""
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

SESSIONS, TURNS = 30, 10
NAMES = ["Alex", "Sam", "Priya", "Jonas", "Mei", "Tom", "Aisha", "Lukas", "Rosa", "Kenji",
         "Nora", "Omar"]
PET_NAMES = ["Mochi", "Pepper", "Luna", "Ziggy", "Biscuit", "Rufus", "Otto", "Bramble", "Juno",
             "Pickle", "Hazel", "Toffee", "Clover", "Nacho"]
SPECIES = ["cat", "dog", "rabbit"]
ITEMS = ["desk lamp", "rain jacket", "coffee grinder", "backpack", "cast-iron pan", "yoga mat",
         "wool blanket", "kettle", "running shoes", "bookshelf", "toaster", "office chair"]
PLACES = ["Lisbon", "Kyoto", "Vienna", "Barcelona", "Copenhagen", "Edinburgh", "Prague",
          "Seville", "Porto", "Krakow"]
OPENERS = ["Hi again!", "Morning!", "Hello, hope you're well.", "Hey, quick one.",
           "Sorry, me again.", "Good evening.", "Right, so.", "Hi there, long day today."]
CHIT_CHAT = [
    ("Thanks, that was really helpful.", "Glad it helped! Anything else on your mind?"),
    ("Honestly it's been a slow week, nothing much happening.", "Slow weeks are allowed; maybe a short walk would help."),
    ("The weather here is grim again, rain all day.", "Rainy days are good for a film and a cup of tea."),
    ("I'm so tired today, didn't sleep well.", "Sorry to hear that; an early night and less screen time might help."),
    ("Anyway, how are you doing?", "I'm doing well, thanks for asking! How can I help today?"),
    ("Work was busy but fine.", "Busy but fine sounds like a decent day."),
    ("Had a lovely walk in the park this morning.", "A morning walk is a great start to the day."),
]


@dataclass
class Question:
    user: int
    kind: str  # see KINDS in bench/recall.py
    text: str
    evidence: list[tuple[int, int]] = field(default_factory=list)  # (session, turn)


@dataclass
class UserCorpus:
    index: int
    name: str
    sessions: list[list[dict]]  # per session: [{"question", "answer", "created_at"}]
    questions: list[Question]


@dataclass
class World:
    """One person's recurring things: the distractors every question has to look past."""
    pets: list[tuple[str, str]]  # (name, species)
    orders: list[tuple[str, str]]  # (number, item)
    places: list[str]
    sister: str
    son: str


def pick(rng, options):
    return options[rng.randrange(len(options))]


# Near misses: the same pets, orders and trips, talked about without the fact a question wants.
def pet_noise(rng, world) -> tuple[str, str]:
    name, species = pick(rng, world.pets)
    return pick(rng, [
        (f"{name} has been chasing the neighbour's {pick(rng, SPECIES)} all morning.", f"{name} sounds full of energy; a longer play session might tire them out."),
        (f"{name} is due for a vet check-up soon, how do I keep a {species} calm in the car?", "A familiar blanket in the carrier and a short practice drive usually help."),
        (f"We took {name} to the vet for the yearly vaccinations, all fine.", f"Good to hear {name} is healthy; note the date for next year's booster."),
        (f"What food would you suggest for an older {species} like {name}?", f"A senior formula with fewer calories and more fibre suits most older pets like {name}."),
        (f"{name} keeps scratching the sofa, any tricks?", "A scratching post next to the sofa and a little catnip or a treat when it is used."),
        (f"{name} was sick on the carpet again, should I worry?", f"Once is usually nothing; if {name} is sick again or stops eating, call the vet."),
    ])


def order_noise(rng, world) -> tuple[str, str]:
    number, item = pick(rng, world.orders)
    return pick(rng, [
        (f"Any news on order {number}? The {item} still says processing.", f"Order {number} is packed and should ship within two working days."),
        (f"Can I change the delivery address for order {number}?", f"Yes, until order {number} ships you can change the address under your account."),
        (f"The {item} from order {number} arrived fine, thanks.", f"Great, enjoy the {item}! Order {number} is marked delivered."),
        (f"Is the {item} in stock again? I might get a second one.", f"The {item} is back in stock in most colours and ships within two days."),
        (f"How do I return something from order {number} if I change my mind?", "You can return unused items within 14 days with the label from your account."),
        (f"Does the {item} come with a warranty?", f"The {item} has a two-year warranty; keep the order confirmation as proof."),
    ])


def trip_noise(rng, world) -> tuple[str, str]:
    place = pick(rng, world.places)
    return pick(rng, [
        (f"Planning a trip to {place}, is spring a good time?", f"Late spring in {place} is mild and less crowded than summer."),
        (f"Is {place} walkable or should we rent a car?", f"Most of {place} is easy on foot, with trams and buses for longer hops."),
        (f"Any food we must try in {place}?", f"Try the market stalls in {place}; the street food is often the best value."),
        (f"We booked the flights to {place}!", f"Exciting! Check the baggage allowance before you pack for {place}."),
        (f"How much cash should I take to {place}?", f"Cards work almost everywhere in {place}; a little cash covers small cafes."),
    ])


def everyday_noise(rng, world) -> tuple[str, str]:
    return pick(rng, [
        ("Any tips for making a lentil soup less bland?", "Salt in layers, a splash of lemon at the end and fresh herbs lift a soup."),
        ("My laptop keeps freezing, what can I do?", "Restart it, install pending updates and free some disk space; that fixes most freezes."),
        ("When should I plant tomatoes?", "After the last frost; start them indoors a few weeks before."),
        ("Can you recommend a series to watch this weekend?", "A well-reviewed crime drama just released its second season."),
        ("I keep putting off clearing the garage, any motivation tips?", "Set a timer for twenty minutes and stop when it rings; starting is the hard part."),
        (f"My son {world.son} wants a new bike, what size for a ten-year-old?", "A 24-inch wheel suits most ten-year-olds; let him try one in a shop."),
        (f"My sister {world.sister} is visiting next month, ideas for a day out?", "A market in the morning, a museum after lunch and dinner somewhere local."),
        ("What's a good way to unwind after work?", "A walk, some music or a hot shower can help you switch off."),
        ("How long can I keep leftover curry in the fridge?", "Three to four days in a sealed container; reheat it until piping hot."),
        ("My knees ache a bit after running, is that normal?", "Mild aches are common; rest a day and build the distance up slowly."),
    ])


def own_chatter(rng, world) -> tuple[str, str]:
    """The person's own life on the topics of the planted facts, without the facts themselves."""
    name, species = pick(rng, world.pets)
    return pick(rng, [
        ("Work has been hectic this week, so many meetings.", "Hectic weeks happen; protect an hour a day for focused work."),
        ("I'm thinking about changing jobs, the hours are long.", "Write down what you want from the next role before you start looking."),
        ("Went for a long run along the river, legs are sore.", "Stretch gently and drink plenty; sore legs after a long run are normal."),
        ("Should I sign up for another race this autumn?", "If you enjoyed the training, an autumn race gives you a goal for the summer."),
        (f"My sister {world.sister} came round for dinner, we talked for hours.", "Evenings like that are the best; it sounds like you're close."),
        ("The flat is freezing, the heating is playing up again.", "Bleed the radiators and check the boiler pressure before calling anyone."),
        ("I've started painting again in the evenings, mostly landscapes.", "Painting is a lovely way to unwind; landscapes are a good place to start."),
        ("We're thinking of getting a bigger car for holidays.", "An estate or a small SUV gives you room for luggage without huge running costs."),
        ("I'm behind on my reading, too many books on the pile.", "Reading twenty minutes before bed gets through a pile faster than you'd think."),
        (f"I'm trying to teach {name} a new trick but it's slow going.", f"Short sessions with treats work best; {name} will get there."),
        ("I'm trying to eat more healthily this month.", "More vegetables, fewer snacks and cooking at home make a real difference."),
        ("I'd love to learn an instrument but never find the time.", "Even ten minutes a day adds up; a cheap instrument is enough to start."),
        (f"{name}'s breath smells a bit, is that normal for a {species}?", "Bad breath can mean dental trouble; ask the vet at the next check-up."),
        ("I had a reaction to something at dinner last night, a bit of a rash.", "If a rash comes back after eating, keep a food diary and see a doctor."),
    ])


def near_miss(rng, world) -> tuple[str, str]:
    """Someone else's version of a planted fact: close in meaning, other names."""
    return pick(rng, NEAR_MISSES)


NOISE = [pet_noise, pet_noise, order_noise, trip_noise, everyday_noise, own_chatter,
         own_chatter, near_miss, near_miss]
CLOSERS = ["Let me know if there's anything else I can help with.", "Hope that helps!",
           "Happy to look into anything else.", "", "", ""]

# Facts: (customer sentence, assistant sentence, detail question (shares rare words),
# paraphrase question (other words for the same thing), and maybe a question about when it
# happened (the turn's date is the answer)); {slots} from the person's world.
FACTS = [
    ("{pet} kept pawing at her mouth, so the vet had a look: a back tooth is cracked and has to be pulled next week.",
     "Poor {pet}; tooth extractions are routine and most pets eat normally within days.",
     "What did the vet say about {pet}'s tooth?", "Why does my animal need dental surgery?",
     "When did the vet find {pet}'s cracked tooth?"),
    ("Turns out I'm allergic to {allergen}; my throat swelled up after lunch at a friend's.",
     "That must have been frightening; do see a doctor about an emergency pen.",
     "What am I allergic to?", "Which food gives me a bad reaction?"),
    ("I started the new job as a {job} at {employer} on Monday; the commute is long but the team is lovely.",
     "Congratulations on the new role! A long commute is easier with a good podcast.",
     "Where did I start my new job as a {job}?", "Which company hired me recently?"),
    ("I ran the {city} half marathon on Sunday in {duration}, a personal best.",
     "Brilliant, a personal best is a real achievement; rest well this week.",
     "What was my time in the {city} half marathon?", "How quickly did I finish that 21 km race?",
     "When did I run the {city} half marathon?"),
    ("My sister {sister} just had a baby girl, they called her {baby}.",
     "Congratulations to {sister} and the whole family!",
     "What did {sister} call her baby?", "What is my newborn niece named?",
     "When was {sister}'s baby born?"),
    ("The landlord finally fixed the {appliance} after three weeks of waiting.",
     "Good, three weeks is far too long to wait for a repair.",
     "What did the landlord fix after three weeks?", "Which appliance did the person I rent from repair?"),
    ("I finished my watercolour of {subject} and hung it in the {room}.",
     "Lovely, a painting of your own makes a room feel like home.",
     "Where did I hang my watercolour of {subject}?", "Where in my home is the artwork I completed?"),
    ("We finally bought a car, a second-hand {car} in {colour}.",
     "Congratulations on the {car}! Get it serviced soon so you know where you stand.",
     "What colour is the {car} we bought?", "Which vehicle did we purchase?",
     "When did we buy the {car}?"),
    ("For book club this month we're reading {book}, and I'm hosting.",
     "{book} should give you plenty to talk about; good luck with hosting.",
     "Which book are we reading for book club?", "Which novel is my reading group discussing?"),
    ("{pet2} finally learnt to {trick}, it took weeks of treats.",
     "Well done to both of you; patience and treats work wonders.",
     "What trick did {pet2} learn?", "What new skill has my animal picked up?"),
    ("The doctor says my cholesterol is high, so I'm cutting back on {food}.",
     "That sounds sensible; small swaps add up over time.",
     "What am I cutting back on because of my cholesterol?", "What did my physician tell me to eat less of?"),
    ("I've signed up for {instrument} lessons on Thursday evenings.",
     "How lovely, weekly lessons are a great way to make steady progress.",
     "When are my {instrument} lessons?", "Which musical instrument am I learning?",
     "When did I sign up for {instrument} lessons?"),
]
NEAR_MISSES = [
    ("The neighbour's dog had two teeth pulled last year and it cost a fortune.", "Dental work for pets can be pricey; some pet insurance covers it."),
    ("My colleague is allergic to cats, so we never meet at mine.", "Allergies are tricky; meeting somewhere neutral is kind."),
    ("My brother-in-law got a job at a bank last month.", "Good for him, a new job is a fresh start."),
    ("A friend ran her first 10k on Saturday, so proud of her.", "That's a big milestone; a 10k takes real training."),
    ("Our neighbours had twins in the summer, they look exhausted.", "Twins are a lot of work; a cooked meal would be a kind gesture."),
    ("The shower has been dripping for days, I need to call someone.", "A dripping shower is usually a worn washer; a plumber fixes it quickly."),
    ("I bought a print of a lighthouse at the market for the living room.", "Prints are a lovely way to bring art into a room."),
    ("My dad is selling his old van, it's done 200,000 miles.", "Vans with high mileage still sell if the service history is good."),
    ("I just finished a thriller on the train, couldn't put it down.", "A good thriller makes a commute fly by."),
    ("The neighbour's dog can open the garden gate by itself now.", "Clever dog; a latch it cannot reach might be wise."),
    ("My dad's blood pressure is up, he's been told to cut down on salt.", "Cutting salt helps; herbs and lemon add flavour instead."),
    ("My son wants to join the school choir and sing every week.", "Singing in a choir is great for confidence."),
    ("A parcel for my neighbour turned up smashed on our doorstep.", "Annoying; the sender can claim from the courier."),
    ("What do you recommend as a gift for a colleague who is leaving?", "A nice notebook or a plant is a safe choice for a leaving gift."),
]
SLOTS = {
    "allergen": ["peanuts", "shellfish", "sesame", "kiwi"],
    "job": ["nurse", "carpenter", "pharmacist", "librarian"],
    "employer": ["St Anne's Hospital", "Fairfield Joinery", "Boots", "the city library"],
    "city": ["Berlin", "Bristol", "Oslo", "Valencia"],
    "duration": ["1 hour 52", "2 hours 5", "1 hour 47"],
    "baby": ["Iris", "Maya", "Elsie", "Noor"],
    "appliance": ["boiler", "dishwasher", "washing machine", "fridge"],
    "subject": ["the harbour", "our old house", "a heron", "the allotment"],
    "room": ["hallway", "kitchen", "bedroom"],
    "car": ["Honda Civic", "Subaru Outback", "Toyota Prius", "Skoda Octavia"],
    "colour": ["dark green", "silver", "navy blue"],
    "book": ["Middlemarch", "Dune", "Beloved", "The Remains of the Day"],
    "trick": ["roll over", "give a paw", "fetch the newspaper", "ring a bell at the door"],
    "food": ["cheese", "red meat", "butter", "fried food"],
    "instrument": ["cello", "piano", "trumpet", "ukulele"],
}
# Order problems: the question names the order number, or describes what went wrong.
ORDER_FACTS = [
    ("The {item} from order {number} arrived with a cracked base, so I'd like a replacement.",
     "Sorry about that; a replacement {item} for order {number} ships tomorrow.",
     "Was the {item} in order {number} damaged?", "Which purchase came damaged in the post?"),
    ("Order {number} came with the wrong colour {item}, I asked for grey not orange.",
     "Apologies; we'll send the grey {item} and a label for the orange one.",
     "What was wrong with the colour of order {number}?", "Which delivery contained an item in a colour I never chose?"),
]
# What the assistant said: the question is about its side of the turn.
ADVICE = [
    ("What should I get my dad for his seventieth birthday?",
     "A {gift} would be a thoughtful present for a seventieth; add a handwritten card.",
     "What did you suggest for my dad's birthday present?",
     {"gift": ["star map of the night he was born", "leather-bound photo album", "hamper of local cheeses"]}),
    ("Which plant would survive in our dark bathroom?",
     "A {plant} copes well with low light and the humidity of a bathroom.",
     "Which plant did you recommend for the bathroom?",
     {"plant": ["snake plant", "ZZ plant", "cast-iron plant", "Boston fern"]}),
    ("My lower back hurts after gardening, what can I do?",
     "Try {remedy}, and kneel on a pad instead of bending from the waist.",
     "What did you tell me to do about my back pain?",
     {"remedy": ["gentle cat-cow stretches each morning", "a warm compress for twenty minutes", "short walks every hour"]}),
]
# Two sessions: (first sentence, second sentence, question needing both).
PAIRED = [
    ("We moved to {city1} in the spring for my partner's work.", "We've moved again, to {city2} this time, closer to family.",
     "Which towns have we lived in since my partner changed jobs?", {"city1": ["Leeds", "Utrecht", "Lyon"], "city2": ["York", "Ghent", "Nantes"]}),
    ("We adopted a {species} from the shelter and named {them} {newpet}.", "{newpet} had to have stitches after a fight in the garden.",
     "Which pet did we adopt from the shelter, and what injury did it have?", {"species": ["kitten", "greyhound", "rescue rabbit"], "them": ["it"], "newpet": ["Sprout", "Dash", "Fig"]}),
    ("I gave up {treat} in January.", "Two months in and I've lost {kilos} kilos, feeling great.",
     "How much weight have I lost since quitting {treat}?", {"treat": ["sugar", "alcohol", "crisps"], "kilos": ["three", "four", "five"]}),
]
DINNER = ("I made {meal} for dinner tonight and it turned out great.", "That sounds delicious!",
          ["mushroom pie", "salmon with rice", "a bean chilli", "roast chicken", "gnocchi",
           "a Thai green curry", "stuffed peppers", "fish pie", "a veggie lasagne",
           "pork dumplings", "a tofu curry", "shepherd's pie"])
UNANSWERABLE = ["What is my brother's name?", "Which football team do I support?",
                "What is my blood type?", "Where did I go to university?",
                "What's my wife's birthday?", "Which bank do I use?", "What size shoes do I wear?"]


def noisy(rng, world, main: tuple[str, str] | None, extra: int) -> tuple[str, str]:
    """A turn: an opener now and then, `extra` asides, and the main fragment somewhere among them."""
    parts = [pick(rng, NOISE)(rng, world) for _ in range(extra)]
    if main:
        parts.insert(rng.randrange(len(parts) + 1), main)
    if rng.random() < 0.4:
        parts.insert(0, (pick(rng, OPENERS), ""))
    answer = " ".join([*(p[1] for p in parts if p[1]), pick(rng, CLOSERS)]).strip()
    return " ".join(p[0] for p in parts), answer


def build_user(index: int) -> UserCorpus:
    rng = random.Random(2000 + index)
    pets = rng.sample(PET_NAMES, 4)
    world = World([(p, pick(rng, SPECIES)) for p in pets[:3]],
                  [(str(rng.randrange(40000, 99999)), item) for item in rng.sample(ITEMS, 8)],
                  rng.sample(PLACES, 3), pick(rng, ["Hannah", "Leila", "Marta", "Ines"]),
                  pick(rng, ["Leo", "Max", "Noah", "Finn"]))
    start = datetime(2026, 1, 5, 9) + timedelta(days=index)
    sessions = []
    for s in range(SESSIONS):
        opened = start + timedelta(days=4 * s + rng.randrange(3), hours=rng.randrange(11),
                                   minutes=rng.randrange(60))
        turns = []
        for t in range(TURNS):
            if rng.random() < 0.2:
                q, a = pick(rng, CHIT_CHAT)
            else:
                q, a = noisy(rng, world, None, rng.randrange(1, 5))
            turns.append({"question": q, "answer": a, "created_at": opened + timedelta(minutes=3 * t)})
        sessions.append(turns)
    questions: list[Question] = []
    used: set[tuple[int, int]] = set()

    def plant(fragment: tuple[str, str], session: int | None = None, extra: int | None = None):
        while True:
            where = (rng.randrange(SESSIONS) if session is None else session, rng.randrange(TURNS))
            if where not in used:
                break
        used.add(where)
        q, a = noisy(rng, world, fragment, rng.randrange(1, 5) if extra is None else extra)
        sessions[where[0]][where[1]].update(question=q, answer=a)
        return where

    values = {slot: pick(rng, options) for slot, options in SLOTS.items()}
    values.update(pet=world.pets[0][0], pet2=world.pets[1][0], sister=world.sister)
    for line, reply, detail, paraphrase, *when in FACTS:
        where = plant((line.format(**values), reply.format(**values)))
        draw = rng.random()
        kind, text = ("paraphrase", paraphrase) if draw < 0.2 else ("date", when[0]) if (
            when and draw > 0.6) else ("detail", detail)
        questions.append(Question(index, kind, text.format(**values), [where]))
    for (number, item), (line, reply, by_number, paraphrase) in zip(world.orders, ORDER_FACTS):
        slots = {"number": number, "item": item}
        where = plant((line.format(**slots), reply.format(**slots)))
        kind, text = pick(rng, [("order number", by_number), ("paraphrase", paraphrase)])
        questions.append(Question(index, kind, text.format(**slots), [where]))
    for line, reply, question, options in ADVICE:
        slots = {slot: pick(rng, choices) for slot, choices in options.items()}
        questions.append(Question(index, "speaker", question, [plant((line, reply.format(**slots)))]))
    for first, second, question, options in PAIRED:
        slots = {slot: pick(rng, choices) for slot, choices in options.items()}
        early = rng.randrange(SESSIONS // 2)
        a = plant((first.format(**slots), "Good to know, thanks for telling me."), early)
        b = plant((second.format(**slots), "Thanks for the update!"),
                  rng.randrange(early + 1, SESSIONS))
        questions.append(Question(index, "two-session", question.format(**slots), [a, b]))
    line, reply, meals = DINNER  # the same kind of sentence on many days: only the date tells
    dinners = [plant((line.format(meal=meal), reply), session)
               for meal, session in zip(rng.sample(meals, len(meals)),
                                        rng.sample(range(SESSIONS), len(meals)))]
    for where in rng.sample(dinners, 3):
        day = sessions[where[0]][where[1]]["created_at"]
        wording = pick(rng, ["What did I cook for dinner on {d:%B} {d.day}?",
                             "What was my evening meal on {d.day} {d:%B}?"])
        questions.append(Question(index, "date", wording.format(d=day), [where]))
    for text in rng.sample(UNANSWERABLE, 3):
        questions.append(Question(index, "unanswerable", text))
    return UserCorpus(index, NAMES[index % len(NAMES)], sessions, questions)


def import_file(session: list[dict]) -> dict:
    """A session as a Nimbus conversation file, for `import_conversation` (as `flask import`)."""
    from webapp.llm.messages import assistant_message, user_message
    from webapp.transfer import FORMAT, VERSION
    return {"format": FORMAT, "version": VERSION, "title": session[0]["question"][:60],
            "turns": [{"messages": [user_message(t["question"]), assistant_message(t["answer"])],
                       "created_at": t["created_at"].isoformat()} for t in session]}


def build(users: int) -> list[UserCorpus]:
    return [build_user(i) for i in range(users)]
