"""bench/locomo.py reads LoCoMo's shapes into turns whose dia_ids the evidence maps to; checked on
a two-session conversation written here, since the corpus itself is not shipped."""
import json
import zipfile
from datetime import datetime

from bench.locomo import import_file, load

CONVERSATION = {
    "speaker_a": "Ana", "speaker_b": "Ben",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben!"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Hey Ana, I adopted a dog.",
         "blip_caption": "a photo of a puppy"},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "What is its name?"},
    ],
    "session_2_date_time": "10:37 am on 27 June, 2023",
    "session_2": [
        {"speaker": "Ben", "dia_id": "D2:1", "text": "Rex learned to sit."},
        {"speaker": "Ana", "dia_id": "D2:2", "text": "Good boy!"},
    ],
}
QA = [{"question": "What did Ben adopt?", "answer": "a dog", "evidence": ["D1:2"], "category": 4},
      {"question": "What can Rex do?", "answer": "sit", "evidence": ["D2:1; D:1:3"],
       "category": 1}]


def test_lines_pair_into_dated_turns_and_evidence_maps_to_them(tmp_path):
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([{"sample_id": "conv-1", "conversation": CONVERSATION, "qa": QA}]))
    [sample] = load(str(path))
    first, second = sample.sessions
    assert [(t.question, t.answer) for t in first] == [
        ("Hi Ben!", "Hey Ana, I adopted a dog. [shares a photo: a photo of a puppy]"),
        ("What is its name?", "")]
    assert first[1].created_at == datetime(2023, 5, 8, 13, 57)
    assert second[0].dia_ids == ["D2:1", "D2:2"]
    assert [q.evidence for q in sample.questions] == [["D1:2"], ["D2:1", "D1:3"]]
    assert sample.turn_of()["D1:3"] == (0, 1)
    assert import_file(first)["turns"][1]["messages"] == [
        {"role": "user", "content": "What is its name?"}]


def test_the_release_zip_of_one_file_per_conversation_reads_the_same(tmp_path):
    path = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data/26.json", json.dumps({**CONVERSATION, "qa": QA}))
    [sample] = load(str(path))
    assert sample.id == "26" and sample.speakers == ("Ana", "Ben")
    assert len(sample.questions) == 2 and len(sample.sessions) == 2
