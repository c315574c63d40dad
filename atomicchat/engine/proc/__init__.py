"""The engine in a supervised child process, so that llama.cpp's aborts, hangs and out-of-memory
kills end the child, never the app. `EngineProcess` has the Engine's interface (info, n_ctx,
chat_prompt, tokenize, generate, close); `protocol` holds the messages; `child` runs in the child.
"""

from atomicchat.engine.proc.client import EngineCrashed, EngineProcess, EngineStopped

__all__ = ["EngineCrashed", "EngineProcess", "EngineStopped"]
