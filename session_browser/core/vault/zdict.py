"""The preset dictionary the vault compresses with: the keys and shapes every transcript format
repeats (PraisonAI JSON, Claude Code, Codex and Pi JSONL), so a small file compresses as well
as a large one. Never change these bytes: a chunk records that it used them (flag 1), and a
new dictionary needs a new flag."""

from __future__ import annotations

_PARTS = (
    # Codex rollouts
    '{"timestamp":"2025-01-01T00:00:00.000Z","type":"response_item","payload":{"type":"message",'
    '"role":"assistant","content":[{"type":"output_text","text":"',
    '{"timestamp":"2025-01-01T00:00:00.000Z","type":"event_msg","payload":{"type":"token_count",'
    '"info":{"total_token_usage":{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,'
    '"reasoning_output_tokens":0,"total_tokens":0}}}}\n',
    '"type":"function_call","name":"shell","arguments":"{\\"command\\":[\\"bash\\",\\"-lc\\",\\"',
    '"type":"function_call_output","call_id":"call_","output":"{\\"output\\":\\"',
    '{"timestamp":"2025-01-01T00:00:00.000Z","type":"turn_context","payload":{"cwd":"/home/',
    '"type":"input_text","text":"',
    # Pi sessions
    '{"type":"session","version":3,"id":"","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/home/',
    '{"type":"model_change","id":"","parentId":"","timestamp":"2025-01-01T00:00:00.000Z",'
    '"provider":"anthropic","modelId":"claude-',
    '{"type":"message","id":"","parentId":"","timestamp":"2025-01-01T00:00:00.000Z","message":'
    '{"role":"assistant","content":[{"type":"text","text":"',
    '"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":'
    '{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,'
    '"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":',
    '{"role":"toolResult","toolCallId":"toolu_","toolName":"bash","content":[{"type":"text",'
    '"text":"',
    '{"type":"toolCall","id":"toolu_","name":"read","arguments":{"path":"',
    # Claude Code transcripts
    '"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":0,'
    '"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":'
    '{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":0,'
    '"service_tier":"standard"}},"requestId":"req_',
    '{"type":"tool_result","tool_use_id":"toolu_","content":"',
    '{"type":"tool_use","id":"toolu_","name":"Bash","input":{"command":"',
    '"toolUseResult":{"stdout":"","stderr":"","interrupted":false,"isImage":false},',
    '{"parentUuid":"","isSidechain":false,"userType":"external","cwd":"/home/","sessionId":"",'
    '"version":"2.0.0","gitBranch":"main","type":"user","message":{"role":"user","content":"',
    '"type":"assistant","message":{"id":"msg_","type":"message","role":"assistant",'
    '"model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"',
    '"},"uuid":"","timestamp":"2025-01-01T00:00:00.000Z"}\n',
    # PraisonAI sessions (indent=2, as it writes them)
    '{\n  "session_id": "",\n  "messages": [\n    {\n      "role": "user",\n      "content": "',
    '",\n      "timestamp": 1700000000.0,\n      "metadata": {}\n    },\n    {\n'
    '      "role": "assistant",\n      "content": "',
    '",\n      "timestamp": 1700000000.0,\n      "metadata": {}\n    }\n  ],\n'
    '  "archived_messages": [],\n  "created_at": "2025-01-01T00:00:00.000000+00:00",\n'
    '  "updated_at": "2025-01-01T00:00:00.000000+00:00",\n  "metadata": {\n'
    '    "title": "',
    '",\n      "timestamp": 1700000000.0,\n      "metadata": {}\n    },\n    {\n'
    '      "role": "user",\n      "content": "',
)

ZDICT = "".join(_PARTS).encode()
