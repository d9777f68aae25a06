"""Text to speech and speech to text for ``ctx.tts`` and ``ctx.stt``.

Speech is produced by eSpeak NG (Debian's ``espeak-ng``) and transcribed by
PocketSphinx (PyPI's ``pocketsphinx``, which carries its English model), both local
and offline. Each is used only when its host setting is on; otherwise, or when the
engine is not installed, the call fails with a clear ``unavailable`` error.
"""

from __future__ import annotations

import array
import base64
import io
import shutil
import subprocess
import sys
import tempfile
import wave
from pathlib import Path
from typing import Any

from workbench.errors import ToolError

MAX_TEXT = 10_000
VOICE = "en-us"
WORDS_PER_MINUTE = 140
MAX_AUDIO_BYTES = 20 << 20


def espeak_binary() -> str | None:
    return shutil.which("espeak-ng") or shutil.which("espeak")


def speak(text: str, *, enabled: bool) -> dict[str, Any]:
    """Synthesize ``text`` as WAV: ``{dataB64, mime, sampleRate}``."""
    if not enabled:
        raise ToolError("unavailable", "Text-to-Speech is off; turn it on with "
                        "`workbench config set speech.tts true`")
    binary = espeak_binary()
    if binary is None:
        raise ToolError("unavailable", "Text-to-Speech needs espeak-ng, which is not installed "
                        "(Debian: apt-get install espeak-ng)")
    if not isinstance(text, str) or not text.strip():
        raise ToolError("invalid_arguments", "tts.speak needs some text")
    if len(text) > MAX_TEXT:
        raise ToolError("invalid_arguments", f"tts.speak takes at most {MAX_TEXT} characters")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "speech.wav"
        done = subprocess.run([binary, "-v", VOICE, "-s", str(WORDS_PER_MINUTE), "-w", str(out),
                               "--stdin"], input=text.encode(), capture_output=True, timeout=60)
        if done.returncode != 0 or not out.exists():
            raise ToolError("tool", f"espeak-ng failed: {done.stderr.decode(errors='replace').strip()}")
        data = out.read_bytes()
    with wave.open(io.BytesIO(data)) as wav:
        rate = wav.getframerate()
    return {"dataB64": base64.b64encode(data).decode(), "mime": "audio/wav", "sampleRate": rate}


def _pcm16_mono_16k(data: bytes) -> bytes:
    """WAV bytes as 16 kHz mono 16-bit PCM, the form PocketSphinx expects."""
    with wave.open(io.BytesIO(data)) as wav:
        channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
        frames = wav.readframes(wav.getnframes())
    if width == 1:
        samples = [(b - 128) << 8 for b in frames]
    elif width in (2, 4):
        values = array.array("h" if width == 2 else "i")
        values.frombytes(frames[: len(frames) - len(frames) % width])
        if sys.byteorder == "big":
            values.byteswap()
        samples = list(values) if width == 2 else [v >> 16 for v in values]
    else:
        raise wave.Error(f"{width * 8}-bit samples are not supported")
    if channels > 1:
        samples = [sum(samples[i:i + channels]) // channels
                   for i in range(0, len(samples) - channels + 1, channels)]
    if rate != 16000 and samples:
        step = rate / 16000
        count = int(len(samples) / step)
        last = len(samples) - 1
        resampled = []
        for n in range(count):
            position = n * step
            i = int(position)
            frac = position - i
            nxt = samples[i + 1] if i < last else samples[i]
            resampled.append(int(samples[i] + (nxt - samples[i]) * frac))
        samples = resampled
    out = array.array("h", samples)
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes()


def transcribe(request: dict[str, Any], *, enabled: bool) -> dict[str, Any]:
    """Transcribe WAV audio: ``{dataB64, mime?, language?}`` → ``{text}``."""
    if not enabled:
        raise ToolError("unavailable", "Speech-to-Text is off; turn it on with "
                        "`workbench config set speech.stt true`")
    try:
        from pocketsphinx import Decoder
    except ImportError:
        raise ToolError("unavailable", "Speech-to-Text needs pocketsphinx, which is not installed "
                        "(pip install 'workbench[speech]')") from None
    if not isinstance(request, dict) or not isinstance(request.get("dataB64"), str):
        raise ToolError("invalid_arguments", "stt.transcribe needs {dataB64, mime?, language?}")
    language = request.get("language") or "en"
    if not str(language).lower().startswith("en"):
        raise ToolError("unavailable", f"no speech model for language {language!r}; English only")
    mime = request.get("mime") or "audio/wav"
    if mime not in ("audio/wav", "audio/x-wav", "audio/wave"):
        raise ToolError("invalid_arguments", f"stt.transcribe reads WAV audio, not {mime}")
    try:
        data = base64.b64decode(request["dataB64"], validate=True)
    except ValueError as exc:
        raise ToolError("invalid_arguments", "dataB64 is not valid base64") from exc
    if len(data) > MAX_AUDIO_BYTES:
        raise ToolError("invalid_arguments", f"audio larger than {MAX_AUDIO_BYTES} bytes")
    try:
        pcm = _pcm16_mono_16k(data)
    except (wave.Error, EOFError) as exc:
        raise ToolError("invalid_arguments", f"not a WAV file: {exc}") from exc
    decoder = Decoder(samprate=16000, loglevel="FATAL")
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    hypothesis = decoder.hyp()
    return {"text": hypothesis.hypstr if hypothesis else ""}
