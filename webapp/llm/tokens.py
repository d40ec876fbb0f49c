"""The one token estimator: about four characters a token, scaled by a calibrated ratio."""
import json
import math

MESSAGE_OVERHEAD = 4  # role and separators, as chat formats add per message


def estimate_text(text: str) -> int:
    return math.ceil(len(text or "") / 4)


def estimate_message(message: dict) -> int:
    tokens = MESSAGE_OVERHEAD + estimate_text(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        tokens += estimate_text(call["name"]) + estimate_text(
            json.dumps(call["arguments"], ensure_ascii=False, separators=(",", ":")))
    return tokens


def estimate_messages(messages: list[dict]) -> int:
    return sum(estimate_message(m) for m in messages)


def estimate_tools(specs: list[dict]) -> int:
    """The tool specs sent with every request (their JSON schemas), as they are counted."""
    return sum(MESSAGE_OVERHEAD + estimate_text(json.dumps(s, ensure_ascii=False,
                                                           separators=(",", ":"))) for s in specs)


def calibrated_ratio(previous: float, reported: int | None, estimated: int) -> float:
    """Move the ratio toward what the provider reported, bounded so one odd reply cannot skew it."""
    if not reported or estimated <= 0:
        return previous
    observed = min(max(reported / estimated, 0.25), 4.0)
    return round(0.7 * previous + 0.3 * observed, 4)
