"""Speech for tools, with the real local engines: eSpeak NG speaks, PocketSphinx listens."""

from __future__ import annotations

import base64
import io
import wave

import pytest

from workbench.capabilities import speech
from workbench.errors import ToolError


def test_speak_produces_a_real_wav():
    spoken = speech.speak("one two three four five", enabled=True)
    assert spoken["mime"] == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(spoken["dataB64"]))) as wav:
        assert wav.getframerate() == spoken["sampleRate"]
        seconds = wav.getnframes() / wav.getframerate()
    assert 1.0 < seconds < 6.0


def test_what_is_spoken_can_be_transcribed_back():
    spoken = speech.speak("one two three four five", enabled=True)
    heard = speech.transcribe({"dataB64": spoken["dataB64"], "mime": "audio/wav"}, enabled=True)
    assert {"three", "four", "five"} & set(heard["text"].split()), heard


@pytest.mark.parametrize("call, setting", [
    (lambda: speech.speak("hi", enabled=False), "speech.tts"),
    (lambda: speech.transcribe({"dataB64": ""}, enabled=False), "speech.stt"),
])
def test_settings_off_means_unavailable_with_the_way_to_turn_it_on(call, setting):
    with pytest.raises(ToolError) as info:
        call()
    assert info.value.kind == "unavailable" and setting in info.value.message


@pytest.mark.parametrize("request_, words", [
    ({"dataB64": "not base64!"}, "base64"),
    ({"dataB64": base64.b64encode(b"RIFF....WAVEjunk").decode()}, "WAV"),
    ({"dataB64": "", "mime": "audio/mpeg"}, "WAV audio"),
    ({"dataB64": "", "language": "fr"}, "English only"),
])
def test_bad_audio_requests_are_refused_clearly(request_, words):
    with pytest.raises(ToolError) as info:
        speech.transcribe(request_, enabled=True)
    assert words in info.value.message
