/**
 * The shapes `extractToolCalls` hands out: recovered calls, findings about markup that could not be read,
 * and the options it takes.
 *
 * @module
 */

/**
 * Which family of text markup a call was written in. Each name covers one grammar (one reader); several model
 * families may share it (`hermes` is Hermes, Qwen 2.5 and every model trained on their `<tool_call>` JSON).
 */
export type ExtractFormat =
  /** `<tool_call>{"name", "arguments"}</tool_call>` and the older Hermes tags (`<tools>`, `<JSON>`, ...). */
  | "hermes"
  /** Qwen3-Coder XML: `<function=NAME><parameter=KEY>VALUE</parameter></function>`. */
  | "qwen_xml"
  /** Llama 3.1+ JSON after `<|python_tag|>`: `{"name", "parameters"}`, `;`-separated. */
  | "llama_json"
  /** Llama built-in call syntax after `<|python_tag|>`: `NAME.call(key="value")`. */
  | "llama_python"
  /** Mistral `[TOOL_CALLS]`: a JSON array, `NAME[ARGS]{...}` or `NAME{...}`. */
  | "mistral"
  /** A fenced `json` code block holding a call object or an array of them. */
  | "fenced_json"
  /** A message (after any reasoning) that is a call object or an array of them, with prose after it. */
  | "bare_json"
  /** A call object quoted in prose (`Sure: {"name": ..., "arguments": ...}`). */
  | "inline_json"
  /** Granite 3.0 `<|tool_call|>[...]`. */
  | "granite"
  /** Granite 20B function-calling `<function_call> {...}`. */
  | "granite_fc"
  /** GigaChat `<|function_call|>{...}` and `function call<|role_sep|>\n{...}`; 3.5 writes `<\uff5cGCML\uff5cinvoke>` XML. */
  | "gigachat"
  /** Nemotron `<TOOLCALL>[...]</TOOLCALL>`. */
  | "nemotron"
  /** Jamba, MiniMax-M1 and Apriel `<tool_calls>[...]</tool_calls>` (also objects one per line). */
  | "tool_calls_tag"
  /** InternLM2 `<|action_start|><|plugin|>{...}<|action_end|>`. */
  | "internlm"
  /** Command R7B `<|START_ACTION|>[{"tool_name", "parameters"}]<|END_ACTION|>`. */
  | "command_r"
  /** Phi-4-mini and Firefunction `functools[...]`. */
  | "functools"
  /** Apertus `<|tools_prefix|>[{"NAME": {...}}]<|tools_suffix|>`. */
  | "apertus"
  /** DeepSeek V3, R1 and V3.1: `<\uff5ctool\u2581call\u2581begin\uff5c>...<\uff5ctool\u2581sep\uff5c>...`. */
  | "deepseek"
  /** Kimi K2: `functions.NAME:0<|tool_call_argument_begin|>{...}`. */
  | "kimi_k2"
  /** Kimi K3 XTML: `<|open|>call tool="NAME"<|sep|><|open|>argument key="K" type="T"<|sep|>...`. */
  | "kimi_k3"
  /** Functionary v3.1 `<function=NAME>{...}</function>` and v3.2 `>>>NAME\n{...}`. */
  | "functionary"
  /** gpt-oss harmony: `to=functions.NAME ... <|message|>{...}`. */
  | "harmony"
  /** GLM-4.5/4.6/4.7: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`. */
  | "glm"
  /** MiniMax M2 and M3: `<invoke name="NAME"><parameter name="K">V</parameter></invoke>` (M3: `<K>V</K>`). */
  | "minimax"
  /** Claude-style XML: `<function_calls><invoke name="NAME"><parameter name="K">V</parameter></invoke>`. */
  | "invoke_xml"
  /** DeepSeek V3.2 DSML: `<\uff5cDSML\uff5cinvoke name="NAME"><\uff5cDSML\uff5cparameter name="K" string="true">...`. */
  | "deepseek_dsml"
  /** Step3: `<steptml:invoke name="NAME"><steptml:parameter name="K">V</steptml:parameter>`. */
  | "step3"
  /** Muse Glimmer ATEM: `<atem:invoke name="NAME"><atem:parameter name="K">V</atem:parameter>`. */
  | "glimmer"
  /** Seed-OSS: `<seed:tool_call><function=NAME><parameter=K>V</parameter></function></seed:tool_call>`. */
  | "seed_oss"
  /** MiniCPM: `<function name="NAME"><param name="K">V</param></function>` (CDATA allowed). */
  | "minicpm"
  /** Bare Python call lists `[f(a=1), g()]` (Llama 3.2/4 pythonic) and `<|python_start|>[...]`. */
  | "pythonic"
  /** LFM2 `<|tool_call_start|>[f(a=1)]<|tool_call_end|>`. */
  | "lfm2"
  /** OLMo 3 `<function_calls>f(a=1)\ng()</function_calls>`. */
  | "olmo3"
  /** Gemma 4 `<|tool_call>call:NAME{key:<|"|>text<|"|>}<tool_call|>`. */
  | "gemma"
  /** FunctionGemma `<start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>`. */
  | "function_gemma";

/** One tool call recovered from message text. */
export interface ExtractedToolCall {
  /** The tool name as written (never `""`: markup with no readable name is a finding, not a call). */
  name: string;
  /** The arguments object, or the raw argument text when it did not read as an object. */
  arguments: Record<string, unknown> | string;
  /** The call id, when the text carried one (Mistral `[CALL_ID]`, Kimi `functions.NAME:0`, Command R). */
  id?: string;
  /** The markup family the call was written in. */
  format: ExtractFormat;
  /** Index of the first code unit of the call itself (its JSON object, Python call or element) in the text. */
  start: number;
  /** Index one past the last code unit of the call itself. */
  end: number;
  /** The span of the markup around the call (tags, fence, prefix); several calls may share one block. */
  block: { start: number; end: number };
  /** `text.slice(start, end)`. */
  raw: string;
  /**
   * Set when the call was recognised but could not be read completely: its arguments are not JSON (then
   * `arguments` is their raw text) or its block is not closed (then `arguments` is what could be read, an
   * object when the arguments themselves were whole).
   */
  error?: string;
}

/** What a finding is about. */
export type ExtractFindingCode =
  /**
   * Markup of a known format whose body could not be read as a call (no name could be recovered), or a call
   * whose arguments are cut off by the end of the text.
   */
  | "unreadable_call"
  /** A call was read inside a reasoning block that never closed (it is returned; see the module doc). */
  | "call_in_unclosed_reasoning"
  /** A call-shaped text without a marker (bare JSON, a Python list) named a tool that was not declared. */
  | "undeclared_bare_call"
  /**
   * Call markup inside a fenced code block of another language (```` ```bash ````): it is code, so it is not
   * returned as a call, but a client that finds calls with a pattern may still run it.
   */
  | "call_in_code_fence";

/** Something `extractToolCallsDetailed` noticed but did not return as a call (or returned with a caveat). */
export interface ExtractFinding {
  /** What kind of finding this is. */
  code: ExtractFindingCode;
  /** The markup family it concerns. */
  format: ExtractFormat;
  /** Index in the text where the markup starts. */
  offset: number;
  /** A sentence saying what was seen. */
  message: string;
}

/** Options for `extractToolCalls` and `extractToolCallsDetailed`. */
export interface ExtractOptions {
  /**
   * The tools offered to the model, in any provider shape (OpenAI Chat or Responses, Anthropic, Gemini, MCP,
   * plain `{name, parameters}`). When given, values written as text (XML parameters, Python literals) are
   * typed by each parameter's declared schema, and call-shaped text without a marker (bare JSON, a Python
   * list) counts only when it names one of these tools. Declarations that cannot be read are ignored.
   */
  tools?: readonly unknown[];
}

/** What `extractToolCallsDetailed` returns. */
export interface ExtractResult {
  /** The recovered calls, in text order. */
  calls: ExtractedToolCall[];
  /** Markup that was seen but not returned as a call, or a caveat about a returned call. */
  findings: ExtractFinding[];
}
