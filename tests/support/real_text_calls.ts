/**
 * Real replies in which models wrote their tool calls as text, collected from public issue
 * threads, READMEs and parsers' test fixtures (issue 30). Each `text` is kept verbatim as its
 * source shows it (an excerpt ends where the source's does, and is marked so), with the URL,
 * the model and the call the model meant. They are data: nothing of the projects they come
 * from is code here.
 *
 * The calls name their own projects' tools (`get_weather`, `terminal`, `exec_command`...). To
 * put a sample to this engine, `rename` maps those names, whole words, onto the tools the
 * native engine offers (Claude-Code-named: Read, Write, Edit, Glob, Grep, Bash), changing
 * nothing else; a sample without a mapping calls a tool that is not offered, as the model did.
 * Parameter names that small models use for ours (`cmd`, `filepath`, `query`...) are left as
 * written: reading them is the engine's work (native/text_calls/aliases.ts).
 *
 * `expect` is what the native engine must do with the (renamed) reply: the calls that run, in
 * order, and whether the model is answered with a correction (a call that cannot run: a tool
 * not offered, arguments that do not fit, a call cut off, leaked tokens, an imitation); or
 * `"answer"` for a reply with no call, which is the final answer. Nothing may end silently.
 */

export interface ExpectedRun {
  name: string;
  arguments: Record<string, unknown>;
}

export interface RealSample {
  id: string;
  /** The model family, for the corpus's spread. */
  family: string;
  /** The model as the source names it. */
  model: string;
  /** Where the text comes from. */
  source: string;
  /** The call the model meant, in its source's names. */
  intended: string;
  /** The reply as the source shows it. */
  text: string;
  /** The source shows only the start of the reply. */
  excerpt?: true;
  /** Whole-word renames of the source's tool and parameter names onto ours. */
  rename?: Record<string, string>;
  expect: "answer" | { runs: ExpectedRun[]; corrected: boolean };
}

const run = (name: string, args: Record<string, unknown>): ExpectedRun => ({
  name,
  arguments: args,
});
const runs = (...r: ExpectedRun[]) => ({ runs: r, corrected: false });
const corrected = (...r: ExpectedRun[]) => ({ runs: r, corrected: true });

const F = "```";
const DS = (token: string) => `<｜${token.replaceAll("_", "▁")}｜>`;

export const REAL_TEXT_CALLS: readonly RealSample[] = [
  // --- Qwen ------------------------------------------------------------------------------------
  {
    id: "qwen3-bare-json",
    family: "qwen",
    model: "qwen3:32b (Ollama 0.10.1)",
    source: "https://github.com/ollama/ollama/issues/11662",
    intended: 'repeat_string({"string": "bar"})',
    text: '{"name": "repeat_string", "arguments": {"string": "bar"}}',
    rename: { repeat_string: "Bash", string: "command" },
    expect: runs(run("Bash", { command: "bar" })),
  },
  {
    id: "qwen25-coder-websearch-not-offered",
    family: "qwen",
    model: "qwen2.5-coder:14b (Ollama, OpenAI-compatible endpoint)",
    source: "https://github.com/Gitlawb/openclaude/issues/433",
    intended: 'WebSearch({"query": "repository structure"}), a tool the client did not offer',
    text:
      '{\n  "name": "WebSearch",\n  "arguments": {\n    "query": "repository structure"\n  }\n}',
    expect: corrected(),
  },
  {
    id: "qwen25-coder-unparseable-arguments",
    family: "qwen",
    model: "qwen2.5-coder:14b (Ollama, OpenAI-compatible endpoint)",
    source: "https://github.com/Gitlawb/openclaude/issues/433",
    intended: "repository_structure(...), its arguments not JSON",
    text: '{\n  "name": "repository_structure",\n  "arguments": {...}\n}',
    expect: corrected(),
  },
  {
    id: "qwen3-coder-no-closers",
    family: "qwen",
    model: "qwen3-coder:30b (Ollama 0.32.5)",
    source: "https://github.com/continuedev/continue/issues/13057",
    intended: 'create_new_file({"filepath": "test.txt", "contents": "hello"})',
    text: 'I\'ll create a file called test.txt with the content "hello".\n\n' +
      "<function=create_new_file>\n<parameter=filepath> test.txt\n<parameter=contents> hello",
    rename: { create_new_file: "Write" },
    expect: runs(run("Write", { file_path: "test.txt", content: "hello" })),
  },
  {
    id: "qwen25-coder-write-unescaped-quotes",
    family: "qwen",
    model: "qwen2.5-coder:latest (Ollama)",
    source: "https://github.com/Gitlawb/openclaude/issues/287",
    intended: 'Write({"file_path": "/path/to/index.html", "content": "<html ...>"}), quotes ' +
      "inside the content left unescaped (the issue's page lost the HTML tags): repaired",
    text: `${F}json\n` +
      '{"name": "Write", "arguments": {"file_path": "/path/to/index.html", "content": "\\n' +
      '<html lang="en">\\n\\n\n     <meta charset="UTF-8">\\n    <meta name="viewport" ' +
      'content="width=device-width, initial-scale=1.0">\\n\n      Document\\n\\n\\n\\n\\n"}}\n' +
      F,
    expect: runs(run("Write", {
      file_path: "/path/to/index.html",
      content: '\n<html lang="en">\n\n\n     <meta charset="UTF-8">\n    <meta name="viewport" ' +
        'content="width=device-width, initial-scale=1.0">\n\n      Document\n\n\n\n\n',
    })),
  },
  {
    id: "deepseek-r1-distill-qwen-lmstudio-tool-request",
    family: "deepseek",
    model: "deepseek-r1-distill-qwen-32b-mlx (LM Studio)",
    source: "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/456",
    intended: 'weather_GET({"zoneId": "Asia/Shanghai"}), also planned inside its thinking',
    text:
      '<think>\n好的，我现在需要帮助用户查询今天的天气情况。用户的问题是“今天广州的天气如何”。首先，我要确定用户的需求是什么，他们想知道广州今天的天气状况。\n\n接下来，我需要查看可用的工具。根据提供的工具列表，有一个“weather_GET”工具，可以用来获取当前天气信息。这个工具需要一个参数“zoneId”，即IANA时区数据库标识符。广州的时区是“Asia/Shanghai”，所以我需要使用这个参数来调用工具。\n\n然后，我需要按照指定的格式发送工具请求。正确的格式是[TOOL_REQUEST]标签内包含JSON对象，指定工具名称和参数。因此，我会发送以下请求：\n\n[TOOL_REQUEST]\n{"name": "weather_GET", "arguments": {"zoneId": "Asia/Shanghai"}}\n[END_TOOL_REQUEST]\n\n发送请求后，我会等待工具返回结果。假设工具返回了天气数据，我需要解析这些数据，并以用户友好的方式呈现出来。例如，如果返回的数据包括温度、天气状况和风速等信息，我会将这些内容整理成一段自然的中文回复。\n\n如果工具返回的结果不完整或有误，我需要检查是否正确调用了工具，并确保参数无误。如果问题依旧存在，可能需要联系技术支持或寻找其他途径获取天气信息。\n\n最后，确保回复内容准确无误，并且语言自然流畅，符合用户的需求。这样，用户就能清楚地了解今天广州的天气情况了。\n</think>\n\n[TOOL_REQUEST]\n{"name": "weather_GET", "arguments": {"zoneId": "Asia/Shanghai"}}\n[END_TOOL_REQUEST]',
    rename: { weather_GET: "Read", zoneId: "file_path" },
    expect: runs(run("Read", { file_path: "Asia/Shanghai" })),
  },
  // --- Granite --------------------------------------------------------------------------------
  {
    id: "granite-bare-json",
    family: "granite",
    model: "granite3.1-dense:8b (Ollama; the PR names qwen2.5-coder too)",
    source: "https://github.com/nugget/thane-ai-agent/pull/21",
    intended: 'get_state({"entity_id": "sun.sun"})',
    text: '{"name": "get_state", "arguments": {"entity_id": "sun.sun"}}',
    rename: { get_state: "Read", entity_id: "file_path" },
    expect: runs(run("Read", { file_path: "sun.sun" })),
  },
  // --- Llama ----------------------------------------------------------------------------------
  {
    id: "llama4-scout-json-claude-code-bash",
    family: "llama",
    model: "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic (vLLM 0.23, Claude Code)",
    source: "https://github.com/vllm-project/vllm/issues/46863 (kept as JSON_FUNCTION_OUTPUT " +
      "in vLLM's tests/tool_parsers llama4 pythonic parser test)",
    intended: 'Bash({"command": "echo hello", "timeout": 120000, "run_in_background": false})',
    text: '{"type": "function", "name": "Bash", "parameters": {"command": "echo hello", ' +
      '"timeout": 120000, "run_in_background": false}}',
    expect: runs(
      run("Bash", { command: "echo hello", timeout: 120000, run_in_background: false }),
    ),
  },
  {
    id: "llama32-fenced-json",
    family: "llama",
    model: "llama3.2:3b (Ollama, ollama-js 0.6.3)",
    source: "https://github.com/ollama/ollama/issues/13519",
    intended: 'query_web_search({"query": "install ollama models"})',
    text:
      `${F}json\n{"name": "query_web_search", "parameters": {"query": "install ollama models"}}\n${F}`,
    rename: { query_web_search: "Grep" },
    expect: runs(run("Grep", { pattern: "install ollama models" })),
  },
  {
    id: "llama32-vision-nested-function",
    family: "llama",
    model: "llama-3.2-11b-vision-instruct (vLLM)",
    source: "https://github.com/vllm-project/vllm/issues/11786",
    intended: 'get_current_traffic({"location": "Sydney"})',
    text: '{"type": "function", "function": {"name": "get_current_traffic", "parameters": ' +
      '{"location": "Sydney"}}}',
    rename: { get_current_traffic: "Read", location: "file_path" },
    expect: runs(run("Read", { file_path: "Sydney" })),
  },
  {
    id: "llama32-hallucinated-tool-beside-real",
    family: "llama",
    model: "llama3.2:3b (Ollama, LangChain)",
    source: "https://github.com/atwmarshall/dead-reckoning/issues/30",
    intended: 'trace_impact({"symbol": "slugify"}), after a call to "slugify", a tool that ' +
      "does not exist",
    text: '{"name": "slugify", "parameters": {}}; {"name": "trace_impact", "parameters": ' +
      '{"symbol": "slugify"}}',
    rename: { trace_impact: "Grep", symbol: "pattern" },
    expect: corrected(run("Grep", { pattern: "slugify" })),
  },
  {
    id: "llama4-python-start",
    family: "llama",
    model: "Llama 4 (vLLM's llama4_pythonic parser fixture)",
    source: "vLLM tests/tool_parsers llama4 pythonic parser test, PYTHON_TAG_FUNCTION_OUTPUT " +
      "(https://github.com/vllm-project/vllm)",
    intended: 'get_weather({"city": "LA", "metric": "C"})',
    text: "<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>",
    rename: { get_weather: "Glob", city: "pattern", metric: "path" },
    expect: runs(run("Glob", { pattern: "LA", path: "C" })),
  },
  {
    id: "llama-pythonic-two-calls",
    family: "llama",
    model: "Llama 3.2/4 pythonic (vLLM's parser fixture)",
    source: "vLLM tests/tool_parsers llama4 pythonic parser test, parallel_calls " +
      "(https://github.com/vllm-project/vllm)",
    intended: 'get_weather({"city": "LA", "metric": "C"}), register_user({"name": "Doe", ' +
      '"age": 9})',
    text: "[get_weather(city='LA',metric='C'),register_user(name='Doe',age=9)]",
    rename: {
      get_weather: "Glob",
      city: "pattern",
      metric: "path",
      register_user: "Bash",
      name: "command",
      age: "timeout",
    },
    expect: runs(
      run("Glob", { pattern: "LA", path: "C" }),
      run("Bash", { command: "Doe", timeout: 9 }),
    ),
  },
  {
    id: "llama31-function-tag-missing-required",
    family: "llama",
    model: "Llama 3.1 (Meta's prompt format, as quoted in the issue)",
    source: "https://github.com/meta-llama/llama-models/issues/169",
    intended: 'trending_songs({"n": 10})',
    text: '<function=trending_songs>{"n": 10}</function><|eot_id|>',
    rename: { trending_songs: "Read", n: "limit" },
    expect: corrected(),
  },
  {
    id: "llama31-python-tag-pretty",
    family: "llama",
    model: "Llama 3.1 (Meta's prompt format, as quoted in the issue)",
    source: "https://github.com/meta-llama/llama-models/issues/169",
    intended: 'trending_songs({"n": "10", "genre": "all"})',
    text: '<|python_tag|>{\n    "type": "function",\n    "name": "trending_songs",\n    ' +
      '"parameters": {\n        "n": "10",\n        "genre": "all"\n    }\n}<|eom_id|>',
    rename: { trending_songs: "Grep", n: "pattern", genre: "glob" },
    expect: runs(run("Grep", { pattern: "10", glob: "all" })),
  },
  {
    id: "ollama-two-concatenated-objects",
    family: "unknown",
    model: "not named (Ollama via ollama-ai-provider, 2024-07)",
    source: "https://github.com/sgomez/ollama-ai-provider/pull/11",
    intended: 'weather({"location": "San Francisco"}), cityAttractions({"city": "San Francisco"})',
    text: '{\n  "name": "weather",\n  "arguments": {\n    "location": "San Francisco"\n  }\n} ' +
      '{\n  "name": "cityAttractions",\n  "arguments": {\n    "city": "San Francisco"\n  }\n}',
    rename: { weather: "Read", location: "file_path", cityAttractions: "Grep", city: "pattern" },
    expect: runs(
      run("Read", { file_path: "San Francisco" }),
      run("Grep", { pattern: "San Francisco" }),
    ),
  },
  // --- Mistral --------------------------------------------------------------------------------
  {
    id: "mistral-v03-python-quotes-and-prose",
    family: "mistral",
    model: "neuralmagic/Mistral-7B-Instruct-v0.3-GPTQ-4bit (vLLM)",
    source: "https://github.com/vllm-project/vllm/pull/5649 (review comment)",
    intended: "get_current_weather for Dallas and for San Francisco",
    text: "[TOOL_CALLS][{'name': 'get_current_weather', 'arguments': {'city': 'Dallas', " +
      "'state': 'TX', 'unit': 'fahrenheit'}}, {'name': 'get_current_weather', 'arguments': " +
      "{'city': 'San Francisco', 'state': 'CA', 'unit': 'fahrenheit'}}]$$ In order to execute " +
      "these functions, I need to provide the current weather API. Let me find the data for " +
      "you.\n\nIn Dallas, Texas, the temperature is currently 89°F.\n\nIn San Francisco,",
    excerpt: true,
    rename: { get_current_weather: "Grep", city: "pattern", state: "path", unit: "glob" },
    expect: runs(
      run("Grep", { pattern: "Dallas", path: "TX", glob: "fahrenheit" }),
      run("Grep", { pattern: "San Francisco", path: "CA", glob: "fahrenheit" }),
    ),
  },
  {
    id: "ministral-json-list",
    family: "mistral",
    model: "mlx-community/Ministral-8B-Instruct-2410-4bit (mlx-lm), after [TOOL_CALLS]",
    source: "https://github.com/ml-explore/mlx-lm/issues/1374",
    intended: 'calculator({"expression": "2+3"})',
    text: '[{"name": "calculator", "arguments": {"expression": "2+3"}}]',
    rename: { calculator: "Bash", expression: "command" },
    expect: runs(run("Bash", { command: "2+3" })),
  },
  {
    id: "devstral-name-args",
    family: "mistral",
    model: "Devstral (mlx-lm's Mistral parser input, the [TOOL_CALLS] token stripped)",
    source: "https://github.com/ml-explore/mlx-lm/issues/1374",
    intended: 'calculator({"expression": "2+3"})',
    text: 'calculator[ARGS]{"expression": "2+3"}',
    rename: { calculator: "Bash", expression: "command" },
    expect: runs(run("Bash", { command: "2+3" })),
  },
  // --- gpt-oss (harmony) ----------------------------------------------------------------------
  {
    id: "gpt-oss-tokens-stripped",
    family: "gpt-oss",
    model: "gpt-oss-20b (rapid-mlx 0.6.66)",
    source: "https://github.com/raullenchai/Rapid-MLX/issues/480",
    intended: 'get_weather({"city": "Paris"})',
    text: 'commentary to=functions.get_weather json{"city":"Paris"}',
    rename: { get_weather: "Read", city: "file_path" },
    expect: runs(run("Read", { file_path: "Paris" })),
  },
  {
    id: "gpt-oss-analysis-then-call",
    family: "gpt-oss",
    model: "openai/gpt-oss-20b (avalan, mlx backend)",
    source: "https://github.com/avalan-ai/avalan/blob/main/README.md",
    intended: 'memory.read({"namespace": "games.cards.truco", "search": "retrucar"})',
    text: "<|channel|>analysis<|message|>We need to fetch memory stored in namespace " +
      "games.cards.truco. Use memory.read.<|end|><|start|>assistant<|channel|>commentary " +
      'to=functions.memory.read <|constrain|>json<|message|>{"namespace":"games.cards.truco",' +
      '"search":"retrucar"}<|call|>',
    rename: { "memory.read": "Grep", namespace: "path", search: "pattern" },
    expect: runs(run("Grep", { path: "games.cards.truco", pattern: "retrucar" })),
  },
  {
    id: "gpt-oss-empty-arguments-missing-required",
    family: "gpt-oss",
    model: "openai/gpt-oss-20b (avalan, mlx backend)",
    source: "https://github.com/avalan-ai/avalan/blob/main/README.md",
    intended: "memory.stores({})",
    text: "<|channel|>analysis<|message|>We need to list papers in memory. We have memory " +
      'functions. We should call memory.list for namespace "papers" maybe. Let\'s check memory ' +
      "stores.<|end|><|start|>assistant<|channel|>commentary to=functions.memory.stores " +
      "<|constrain|>json<|message|>{}<|call|>",
    rename: { "memory.stores": "Glob" },
    expect: corrected(),
  },
  {
    id: "gpt-oss-truncated-arguments",
    family: "gpt-oss",
    model: "gpt-oss (llama.cpp's chat parser fixture, a partial reply)",
    source: "llama.cpp tests/test-chat.cpp, COMMON_CHAT_FORMAT_GPT_OSS partial " +
      "(https://github.com/ggml-org/llama.cpp)",
    intended: 'special_function({"arg1": ...}), cut off',
    text: "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>" +
      'commentary to=functions.special_function <|constrain|>json<|message|>{"arg1',
    rename: { special_function: "Bash", arg1: "command" },
    expect: corrected(),
  },
  {
    id: "gpt-oss-channel-names-leaked-answer",
    family: "gpt-oss",
    model: "mlx-community/gpt-oss-20b-MXFP4-Q8 (macprovider)",
    source: "https://github.com/Augustas11/macprovider/issues/743",
    intended: "no call: the answer is four",
    text: 'analysisWe need to answer "What is 2+2? Answer in one word." The answer is "four".\n' +
      "We should output only that word. And nothing else.assistantfinalfour",
    expect: "answer",
  },
  // --- DeepSeek -------------------------------------------------------------------------------
  {
    id: "deepseek-v3-fenced-arguments",
    family: "deepseek",
    model: "DeepSeek-V3 (via LiteLLM)",
    source: "https://github.com/google/adk-python/pull/5654",
    intended: 'analysis_input({"work_dir_name": "..."}), the value elided in the report',
    text: `${DS("tool_calls_begin")}${DS("tool_call_begin")}function${DS("tool_sep")}` +
      `analysis_input\n${F}json\n{"work_dir_name":"..."}\n${F}${DS("tool_call_end")}` +
      DS("tool_calls_end"),
    rename: { analysis_input: "Glob", work_dir_name: "pattern" },
    expect: runs(run("Glob", { pattern: "..." })),
  },
  {
    id: "deepseek-v4-dsml-not-offered",
    family: "deepseek",
    model: "deepseek-v4-flash (0731)",
    source: "https://github.com/TokenRhythm/opensquilla/issues/985",
    intended: 'exec_command({"cmd": ...}) four times (two shown), a tool this engine does ' +
      "not offer",
    text: '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="exec_command">\n<｜DSML｜parameter ' +
      'name="cmd" string="true">Get-Item -LiteralPath \'D:\\deskop_.nbt\' | Select-Object ' +
      "FullName,Length,LastWriteTime</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke " +
      'name="exec_command">\n<｜DSML｜parameter name="cmd" string="true">Get-FileHash ' +
      "-Algorithm SHA256 -LiteralPath 'D:\\deskop_.nbt' | Format-List</｜DSML｜parameter>\n" +
      "</｜DSML｜invoke>\n...\n</｜DSML｜tool_calls>",
    expect: corrected(),
  },
  {
    id: "deepseek-v4-dsml-read-file",
    family: "deepseek",
    model: "DeepSeek V4 (an OpenAI-compatible endpoint)",
    source: "https://github.com/NousResearch/hermes-agent/pull/81237",
    intended: 'read_file({"file": "/path/to/file"})',
    text: '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="read_file">\n<｜DSML｜parameter ' +
      'name="file" string="true">/path/to/file</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
      "</｜DSML｜tool_calls>",
    rename: { read_file: "Read" },
    expect: runs(run("Read", { file_path: "/path/to/file" })),
  },
  {
    id: "deepseek-v3-degenerate-begin-tokens",
    family: "deepseek",
    model: "DeepSeek V3 (SGLang)",
    source: "https://github.com/sgl-project/sglang/pull/5224 (comment)",
    intended: "a call; the model repeated its begin token and degenerated",
    text: DS("tool_calls_begin").repeat(31) + "M".repeat(350) + "\n" + "M".repeat(352),
    excerpt: true,
    expect: corrected(),
  },
  {
    id: "deepseek-imitates-client-call-text",
    family: "deepseek",
    model: "deepseek-chat (Hermes Agent gateway)",
    source: "https://github.com/EKKOLearnAI/hermes-studio/issues/840",
    intended: "execute_code, written as the client's own transcript line",
    text: "[Calling tool: execute_code with arguments={“code”: “...”}]",
    expect: corrected(),
  },
  // --- MiniMax --------------------------------------------------------------------------------
  {
    id: "minimax-m27-invoke",
    family: "minimax",
    model: "MiniMax-M2.7 (Hermes Agent web UI)",
    source: "https://github.com/NousResearch/hermes-agent/issues/27834",
    intended: 'terminal({"command": "cmd /c \\"feishu --help\\""})',
    text: '<minimax:tool_call>\n  <invoke name="terminal">\n    <parameter name="command">cmd /c ' +
      '"feishu --help"</parameter>\n  </invoke>\n</minimax:tool_call>',
    rename: { terminal: "Bash" },
    expect: runs(run("Bash", { command: 'cmd /c "feishu --help"' })),
  },
  {
    id: "minimax-imitates-client-call-text",
    family: "minimax",
    model: "MiniMax-M2.7 or DeepSeek V4 (the issue saw it with both)",
    source: "https://github.com/NousResearch/hermes-agent/issues/27834",
    intended: "execute_code, written as the client's own transcript line",
    text: "[Calling tool: execute_code with arguments: {...}]",
    expect: corrected(),
  },
  // --- Gemma ----------------------------------------------------------------------------------
  {
    id: "gemma4-elided-arguments",
    family: "gemma",
    model: "google/gemma-4-31b-it (vLLM)",
    source: "https://github.com/NousResearch/hermes-agent/issues/38376",
    intended: "terminal({...}), its arguments elided",
    text: "<|tool_call>call:terminal{...}<tool_call|>",
    rename: { terminal: "Bash" },
    expect: corrected(),
  },
  {
    id: "gemma4-thought-then-call-extra-parameter",
    family: "gemma",
    model: "Gemma 4 (vLLM gemma4 parsers, a missed parse)",
    source: "https://github.com/NousResearch/hermes-agent/pull/48412",
    intended: 'patch({"path": "/tmp/a.py", "content": "print(\'hi\')", "mode": "overwrite"})',
    text: "<|channel>thought\nI'll patch the file.\n<channel|><|tool_call>call:patch{path:" +
      '<|"|>/tmp/a.py<|"|>,content:<|"|>print(\'hi\')<|"|>,mode:<|"|>overwrite<|"|>}<tool_call|>',
    rename: { patch: "Write" },
    expect: corrected(),
  },
  {
    id: "gemma4-stray-marker-after-call",
    family: "gemma",
    model: "Gemma 4 (FreeToken's gemma4 detector)",
    source: "https://github.com/FlashML-org/FreeToken/pull/346",
    intended: 'get_weather({"city": "Paris"})',
    text: '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_call',
    rename: { get_weather: "Read", city: "file_path" },
    expect: runs(run("Read", { file_path: "Paris" })),
  },
  // --- GLM ------------------------------------------------------------------------------------
  {
    id: "glm4-0414-markerless",
    family: "glm",
    model: "GLM-4-9B-0414 (mlx-swift-lm)",
    source: "https://github.com/ml-explore/mlx-swift-lm/issues/491",
    intended: 'get_weather({"location": "Paris", "unit": "celsius"})',
    text: 'get_weather\n{"location": "Paris", "unit": "celsius"}',
    rename: { get_weather: "Grep", location: "pattern", unit: "path" },
    expect: runs(run("Grep", { pattern: "Paris", path: "celsius" })),
  },
  {
    id: "glm-format-zero-argument-call",
    family: "glm",
    model: "Raptor-1.0-16B-A3B (GLM 4.5 tool format)",
    source: "https://github.com/osaurus-ai/vmlx-swift/pull/228",
    intended: "list_mailboxes() with no arguments",
    text: "<tool_call>list_mailboxes</tool_call>",
    rename: { list_mailboxes: "Glob" },
    expect: corrected(),
  },
  // --- Kimi -----------------------------------------------------------------------------------
  {
    id: "kimi-fake-tool-call-json",
    family: "kimi",
    model: "kimi-k2.5",
    source:
      "https://github.com/tercumantanumut/seline/blob/main/scripts/REPRODUCE-FAKE-TOOL-CALL.md",
    intended: "readFile(...), written as the client's own JSON",
    text: '{"type":"tool-call","toolCallId":"abc123","toolName":"readFile",...}',
    expect: corrected(),
  },
  {
    id: "kimi-echoes-history-marker",
    family: "kimi",
    model: "kimi-k2.5",
    source:
      "https://github.com/tercumantanumut/seline/blob/main/scripts/REPRODUCE-FAKE-TOOL-CALL.md",
    intended: "readFile, written as the client's history marker",
    text: "[SYSTEM: Tool readFile was previously called and returned: {...}]",
    expect: corrected(),
  },
  // --- Gemini, Claude -------------------------------------------------------------------------
  {
    id: "gemini-declaration-default-api",
    family: "gemini",
    model: "Gemini (via LiteLLM)",
    source: "https://github.com/NousResearch/hermes-agent/issues/74771",
    intended: "cet outil({demandes: [...]}), in Gemini's internal call syntax",
    text: "declaration:default_api:cet outil{demandes:[{assistant:…,demande:…}]}",
    expect: corrected(),
  },
  {
    id: "claude-tool-use-json-in-text",
    family: "claude",
    model: "Claude (through the Claude CLI's stream-json)",
    source: "https://github.com/OpenDigitalProductFactory/opendigitalproductfactory/pull/118",
    intended: "update_feature_brief({...}), written as a tool_use block in text",
    text:
      '{"type":"tool_use","id":"toolu_update_feature_brief_001","name":"update_feature_brief",' +
      '"input":{...}}',
    expect: corrected(),
  },
];

/** The sample's text with its tool and parameter names renamed onto ours (whole words). */
export function renamedText(sample: RealSample): string {
  let text = sample.text;
  for (const [from, to] of Object.entries(sample.rename ?? {})) {
    const escaped = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    text = text.replace(new RegExp(`(?<![\\w])${escaped}(?![\\w])`, "g"), to);
  }
  return text;
}
