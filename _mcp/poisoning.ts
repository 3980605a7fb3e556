/**
 * Tool poisoning and shadowing: descriptions (of tools and their parameters, prompts, resources, a
 * server's `instructions`) and titles (which clients show as names, and some hand the model) are read as
 * instructions, so a malicious server hides orders in them: read `~/.ssh/id_rsa` and pass it as a
 * parameter, do not tell the user, always call this tool instead of `send_email`. This module finds such
 * spans and cuts them out.
 *
 * It runs the scanner engine (`_scan/scan.ts`, context `tool_output`) plus rules of its own that only make
 * sense where the text addresses the model. The cleaner home for these rules is a `description` context in
 * the scanner itself (`ScanContext` gains `"description"`, and `_scan/rules.ts` gains the rules below with
 * that context); until then they live here.
 *
 * @module
 */
import { scan } from "../_scan/scan.ts";
import { FLAG_TAGS } from "../_scan/rules.ts";
import { escapePointer } from "../_common/pointer.ts";
import { copyAsSent, refuseSparse } from "../_common/json.ts";
import { schemaGraphProblem } from "../_common/measure.ts";
import { cutUnits, foldCase, isRecord, lazy } from "../_common/values.ts";
import { DATA_KEYWORDS, SCHEMA_MAPS } from "../_validate/defaults.ts";
import type { ScanFinding } from "../types.ts";

/** What a description rule found: the scanner's categories plus the ones only descriptions have. */
export type DescriptionCategory =
  | ScanFinding["category"]
  /** An instruction to read local files or credentials. */
  | "file_access"
  /** An instruction to put secrets or file contents into a parameter. */
  | "secret_passing"
  /** An instruction to hide something from the user. */
  | "concealment"
  /** A tag block addressed to the model (`<IMPORTANT>...</IMPORTANT>`). */
  | "hidden_block"
  /** An order about other tools, or a tool this server does not declare (shadowing). */
  | "shadowing";

/** One flagged span of a description. */
export interface DescriptionFinding {
  /** What kind of instruction it is. */
  category: DescriptionCategory;
  /** The rule that fired. */
  rule: string;
  /** Start of the span removed (UTF-16 index into the description). */
  start: number;
  /** One past its end. */
  end: number;
  /** A short excerpt of what fired. */
  excerpt: string;
}

/** A description rule: a regular expression over the original text. */
interface DescriptionRule {
  name: string;
  category: DescriptionCategory;
  re: RegExp;
  /** Remove only the match (a tag block), not the whole sentence around it. */
  exact?: boolean;
}

/**
 * What an injected description sends the model to read. "secret scanning" and "secret detection" (a code
 * host's alerts about leaked secrets) name a feature, not a secret to read; but not before a key, a token, a
 * password or credentials ("read the secret detection key"): that is a secret again.
 */
const SENSITIVE =
  String.raw`(?:~\/|\$HOME|%USERPROFILE%|\.ssh\b|id_rsa|id_ed25519|\.env\b|mcp\.json|\.aws\b|` +
  String.raw`credentials|\.netrc|\.npmrc|\.git-credentials|\.bash_history|\/etc\/(?:passwd|shadow)|` +
  String
    .raw`private keys?|api[ _-]?keys?|access tokens?|passwords?|secrets?(?! (?:scann(?:ing|er)|detection)\b(?! (?:keys?|tokens?|credentials?|passwords?)\b))|conversation history|system prompt)`;

/** Rules that only make sense for text addressed to the model. Each is anchored on a verb aimed at it. */
const RULES: readonly DescriptionRule[] = [
  {
    name: "description.tag_block",
    category: "hidden_block",
    exact: true,
    re:
      /<(important|system|instructions?|secret|hidden|admin|note-to-ai|ai-only|critical)\b[^>]*>[\s\S]*?(?:<\/\1\s*>|$)/gi,
  },
  {
    name: "description.read_sensitive",
    category: "file_access",
    re: new RegExp(
      String.raw`\b(?:read|open|cat|load|access|fetch|retrieve|get|grab|include|look up)\b[^.\n]{0,80}?` +
        SENSITIVE,
      "gi",
    ),
  },
  {
    name: "description.pass_secret",
    category: "secret_passing",
    re: new RegExp(
      String.raw`\b(?:pass|put|send|include|insert|add|provide|append|attach|embed)\b[^.\n]{0,60}?` +
        String.raw`(?:its |their |the )?(?:content|contents|text|value|data|${SENSITIVE.slice(3, -1)})` +
        String
          .raw`[^.\n]{0,40}?\b(?:as|in|into|to|inside) (?:the |a )?['"\`]?\w+['"\`]? ?(?:parameter|argument|field|param)`,
      "gi",
    ),
  },
  {
    name: "description.conceal",
    category: "concealment",
    re:
      /\b(?:do not|don't|never|must not|should not)\s+(?:tell|inform|notify|mention|show|reveal|alert|warn|let)\b[^.\n]{0,30}?\b(?:the )?user\b|\bwithout (?:telling|informing|notifying|alerting|asking) (?:the )?user\b|\b(?:hide|conceal|keep)\b[^.\n]{0,30}?\bfrom (?:the )?user\b|\bthe user (?:must|should|need) not (?:know|see|be told)\b/gi,
  },
];

/** Tools of other well-known MCP servers: a description that names one (and the server lacks it) shadows. */
const WELL_KNOWN_TOOLS: readonly string[] = [
  "send_email",
  "read_file",
  "read_text_file",
  "write_file",
  "edit_file",
  "list_directory",
  "execute_command",
  "run_terminal_cmd",
  "start_process",
  "browser_navigate",
  "browser_click",
  "create_issue",
  "create_pull_request",
  "push_files",
  "create_or_update_file",
  "execute_sql",
  "read_query",
  "write_query",
  "search_repositories",
  "fetch",
  "get_file_contents",
  "send_message",
  "post_message",
  "slack_post_message",
];

/** `tool_name` / `tool-name` / `` `x` `` identifiers: the shapes tool names take in descriptions. */
const NAME_LIKE = /`([A-Za-z][\w.-]{1,63})`|\b([a-z][a-z0-9]*(?:[_-][a-z0-9]+)+)\b/g;

/** Options for {@linkcode checkDescription}. */
export interface DescriptionCheckOptions {
  /**
   * Names (and titles) of the tools this server declares: a description may name those freely; null: not
   * known yet, no shadowing check.
   */
  declared: ReadonlySet<string> | null;
}

/**
 * A prohibition just before a rule's verb ("Do not include any API keys in your query"): the opposite of
 * an order, unless it is one in disguise ("do not forget to read ...").
 */
const PROHIBITED_BEFORE =
  /\b(?:do not|don't|never|must not|mustn't|should not|shouldn't|cannot|can't|avoid)\s+(?:(?:ever|to|try|attempt)\s+)?$/i;

/** True when the match of a description rule at `index` is a prohibition, not an instruction. */
function prohibited(text: string, index: number): boolean {
  return PROHIBITED_BEFORE.test(text.slice(Math.max(0, index - 32), index));
}

/** The tool a forced-tool-use match names: the quoted text after the verb, or the identifier. */
const NAMED_TOOL =
  /\b(?:call|invoke|use|run|execute|trigger)\s+(?:the\s+)?(?:([`'"])([^`'"\n]{1,80})\1|([\w.-]+))/i;

/**
 * True when a scanner finding orders the model to call a tool this server declares (by name or title):
 * "You must call 'Resolve Library ID' first" is a workflow the server describes, not poisoning. An order to
 * call another server's tool stays flagged here, and as shadowing.
 */
function callsOwnTool(text: string, finding: ScanFinding, declared: ReadonlySet<string> | null): boolean {
  if (declared === null || finding.category !== "forced_tool_use") return false;
  const m = NAMED_TOOL.exec(text.slice(finding.start, finding.end + 80));
  const named = (m?.[2] ?? m?.[3] ?? "").toLowerCase();
  if (named === "") return false;
  for (const name of declared) if (name.toLowerCase() === named) return true;
  return false;
}

/**
 * Scanner rules that do not apply to descriptions: a description addresses the model by nature ("Claude:
 * ..." in an example dialogue is not data speaking to the model out of turn).
 */
const NOT_FOR_DESCRIPTIONS: ReadonlySet<string> = new Set(["override.addresses_ai"]);

/** Spans naming tools the server does not declare: well-known tools, or any name after "call/use ... tool". */
function shadowing(text: string, declared: ReadonlySet<string>): DescriptionFinding[] {
  const out: DescriptionFinding[] = [];
  for (const m of text.matchAll(NAME_LIKE)) {
    const name = m[1] ?? m[2];
    if (declared.has(name)) continue;
    const before = text.slice(Math.max(0, m.index - 40), m.index).toLowerCase();
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 12);
    // "call the x_y tool", "instead of using x_y": an order about a tool this server does not have.
    const ordered = (/\b(?:call|use|invoke|run|using|calling|invoking|the)\s+(?:the\s+)?$/.test(before) &&
      /^\s*(?:tool|function)\b/i.test(after)) ||
      /\b(?:instead of|rather than)\s+(?:using\s+|calling\s+|invoking\s+)?(?:the\s+)?$/.test(before);
    if (!WELL_KNOWN_TOOLS.includes(name) && !ordered) continue;
    out.push({
      category: "shadowing",
      rule: "description.undeclared_tool",
      start: m.index,
      end: m.index + m[0].length,
      excerpt: m[0],
    });
  }
  return out;
}

/** True when a sentence ends at `i`: `.`, `!` or `?` followed by white space or the end; or a line break. */
function endsSentence(text: string, i: number): boolean {
  const c = text[i];
  if (c === "\n") return true;
  return (c === "." || c === "!" || c === "?") && (i + 1 === text.length || /\s/.test(text[i + 1]));
}

/** The sentence (or line) around a span: what is removed, so no half-instruction stays behind. */
function sentenceAround(text: string, start: number, end: number): [number, number] {
  let s = start;
  while (s > 0 && !endsSentence(text, s - 1)) s--;
  let e = end;
  while (e < text.length && !endsSentence(text, e)) e++;
  if (e < text.length && text[e] !== "\n") e++;
  while (s < start && /\s/.test(text[s])) s++;
  return [s, e];
}

/** The findings of the scanner and the description rules in `text`, each on its match alone. */
function matchesIn(text: string, options: DescriptionCheckOptions): DescriptionFinding[] {
  const found: DescriptionFinding[] = scan(text, { context: "tool_output" }).findings
    .filter((f) => !NOT_FOR_DESCRIPTIONS.has(f.rule) && !callsOwnTool(text, f, options.declared))
    .map((f) => ({ category: f.category, rule: f.rule, start: f.start, end: f.end, excerpt: f.excerpt }));
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    for (const m of text.matchAll(rule.re)) {
      if (rule.category !== "hidden_block" && prohibited(text, m.index)) continue;
      const excerpt = m[0].length > 80 ? `${cutUnits(m[0], 77)}...` : m[0];
      found.push({
        category: rule.category,
        rule: rule.name,
        start: m.index,
        end: m.index + m[0].length,
        excerpt,
      });
    }
  }
  if (options.declared !== null) found.push(...shadowing(text, options.declared));
  return found;
}

/** Each finding widened to its sentence (a tag block stays exact), ordered by `start`. */
function widened(text: string, found: readonly DescriptionFinding[]): DescriptionFinding[] {
  return found
    .map((f) => {
      if (f.rule === "description.tag_block") return f;
      const [start, end] = sentenceAround(text, f.start, f.end);
      return { ...f, start, end };
    })
    .sort((a, b) => a.start - b.start);
}

/**
 * Check one description: the scanner's findings and the description rules, with each span widened to its
 * sentence (a tag block stays exact). Findings are ordered by `start`; spans may overlap.
 */
export function checkDescription(text: string, options: DescriptionCheckOptions): DescriptionFinding[] {
  if (text.length === 0) return [];
  return widened(text, matchesIn(text, options));
}

/**
 * What a title must not hold: control characters (C0, line breaks and tabs included, DEL, C1: a title is one
 * line, and a line break is how a second, hidden paragraph gets in), the line and paragraph separators (line
 * breaks too, U+2028 and U+2029), direction embeddings, overrides and isolates, and characters that draw
 * nothing, but for those right-to-left and emoji text needs: the left-to-right, right-to-left and Arabic
 * letter marks (which reorder nothing by themselves), the zero-width joiner and non-joiner, the emoji
 * variation selectors (U+FE0E, U+FE0F), and a zero-width space that marks a word break (see
 * `wordBreakAt`). A description may hold a single invisible character for a reason (a soft hyphen in long
 * prose); a label of a few words has none, and a client shows it to the user as the tool's name, where a
 * single one hides what the text says or makes it look like another tool. Global: `hiddenInTitle` reads on
 * past a word break.
 */
const TITLE_HIDDEN =
  // deno-lint-ignore no-control-regex -- control characters are what this looks for
  /[\x00-\x1f\x7f-\x9f\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0]|\udb40[\udc00-\udc7f]|\udb40[\udd00-\uddef]|\ud834[\udd73-\udd7a]/g;

/**
 * The scripts written without spaces between words, where a zero-width space (U+200B) is the word-break hint
 * editors and fonts read: Thai, Lao, Khmer, Myanmar, and Japanese (kana and kanji together: one word may mix
 * them). A real Thai title may carry one. Made on first use, as are `letterOrMark` and `labelPrefix`: V8
 * builds a Unicode-property expression's sets when it is created, about 1 ms of importing this module on Deno.
 */
const wordBreakScripts: () => readonly RegExp[] = lazy(() => [
  /^\p{sc=Thai}$/u,
  /^\p{sc=Lao}$/u,
  /^\p{sc=Khmr}$/u,
  /^\p{sc=Mymr}$/u,
  /^[\p{scx=Hira}\p{scx=Kana}\p{sc=Han}]$/u,
]);

/** A letter or a combining mark (Thai vowels and tone marks are marks: a word may end in one). */
const letterOrMark: () => RegExp = lazy(() => /^[\p{L}\p{M}]$/u);

/**
 * True when the zero-width space at `i` stands between two letters of one script of `wordBreakScripts`:
 * a word break. One between ASCII letters ("Send\u200bEmail"), at an edge or beside another invisible
 * character is not.
 */
function wordBreakAt(text: string, i: number): boolean {
  // The code points either side (a kanji beyond the BMP is a surrogate pair; a lone low surrogate is no
  // letter, and is not to be stepped over to the letter before it).
  const low = text.charCodeAt(i - 1);
  const high = text.charCodeAt(i - 2);
  const back = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? 2 : 1;
  const before = String.fromCodePoint(text.codePointAt(i - back) ?? 0x20);
  const after = String.fromCodePoint(text.codePointAt(i + 1) ?? 0x20);
  if (!letterOrMark().test(before) || !letterOrMark().test(after)) return false;
  return wordBreakScripts().some((script) => script.test(before) && script.test(after));
}

/** The first character of `TITLE_HIDDEN` in `text` that is no word break, or null. */
function hiddenInTitle(text: string): string | null {
  for (const m of text.matchAll(TITLE_HIDDEN)) {
    if (m[0] !== "\u200b" || !wordBreakAt(text, m.index)) return m[0];
  }
  return null;
}

/** The flags written with tag characters (see `FLAG_TAGS`): emoji, read as their black flag. */
const TAG_FLAGS = new RegExp(`\\uD83C\\uDFF4${FLAG_TAGS}`, "g");

/**
 * Rules anchored on an imperative ("read ...", "trigger the ... tool", "export my ..."): at a title's first word
 * the imperative is the label naming its tool's action ("Read Secret", "Trigger Long Running Operation
 * Tool"), not an order to the model.
 */
const LABEL_VERB_RULES: ReadonlySet<string> = new Set([
  "description.read_sensitive",
  "tool.call_named_tool",
  "tool.imperative_on_user_data",
]);

/**
 * What may stand before a label's first word: space, emoji and other symbols ("\u{1f511} Read Secret"), a number
 * ("1. "), a tag in brackets ("[Vault] ", "(beta) "), a namespace of up to four words before a colon, dash or
 * bar ("Vault: ", "Google Cloud - "). Read from the title's first 80 characters only.
 */
const labelPrefix: () => RegExp = lazy(() =>
  /^(?:\[[^\]\n]{1,40}\]|\([^)\n]{1,40}\)|\p{N}{1,3}[.)](?=\s)|(?:[\p{L}\p{N}_.]{1,24} ?){1,4}(?:[:|]| [-\u2013\u2014])(?=\s)|\s+|[^\p{L}\p{N}\s[(]+)*/u
);

/** A path or a key file in a match: "Read ~/.ssh/id_rsa" is no label, wherever it stands. */
const PATH_LIKE = /[~/\\%$]|\.[a-z]|id_rsa|id_ed25519/i;

/** A title that says where to put something ("... and include it in the city parameter") is no label. */
const INTO_PARAMETER =
  /\b(?:in|into|as|to|inside) (?:the |a )?['"`]?\w+['"`]? ?(?:parameter|argument|field|param)\b/i;

/**
 * Check one title (`title`, `annotations.title`, the server's `serverInfo.title`, a schema's `title`): as a
 * description, with two differences, since a title is a label of a few words on one line.
 *
 * - An imperative rule that fires at its first word (after an emoji, a number, a tag or a namespace, as
 *   `labelPrefix` reads them) is the label naming its tool's action and is let be, unless what it names is
 *   a path or a key file, or the title says which parameter to put something in. "Trigger Long Running
 *   Operation Tool", a title of the reference server `server-everything`, fired `tool.call_named_tool`, and
 *   secret stores name tools "Read Secret" or "Get Access Token".
 * - Any character of {@linkcode TITLE_HIDDEN} is `hidden_text` (`title.hidden_character`), where a
 *   description needs a run of them; but a zero-width space between two Thai, Lao, Khmer, Myanmar or
 *   Japanese letters is the word break those scripts write (see `wordBreakAt`).
 *
 * A flagged title is replaced whole.
 *
 * @param text The title.
 * @param options The tools the server declares, as for {@linkcode checkDescription}.
 * @returns The findings, each spanning the whole title.
 */
export function checkTitle(text: string, options: DescriptionCheckOptions): DescriptionFinding[] {
  if (text.length === 0) return [];
  const lead = labelPrefix().exec(text.slice(0, 80))![0].length;
  const label = (f: DescriptionFinding) =>
    LABEL_VERB_RULES.has(f.rule) && f.start <= lead && !PATH_LIKE.test(text.slice(f.start, f.end)) &&
    !INTO_PARAMETER.test(text);
  const found = matchesIn(text, options).filter((f) => !label(f));
  const hidden = hiddenInTitle(text.replace(TAG_FLAGS, "\u{1F3F4}"));
  if (hidden !== null) {
    const excerpt = `\\u{${hidden.codePointAt(0)!.toString(16).toUpperCase()}}`;
    found.push({
      category: "hidden_text",
      rule: "title.hidden_character",
      start: 0,
      end: text.length,
      excerpt,
    });
  }
  // (the whole title goes, as a flagged description's sentence does: a title is one)
  return found.map((f) => ({ ...f, start: 0, end: text.length }));
}

/** Replace each flagged span with a marker naming its categories; overlapping spans are merged. */
export function cleanDescription(text: string, findings: readonly DescriptionFinding[]): string {
  let out = "";
  let at = 0;
  for (let i = 0; i < findings.length; i++) {
    const start = Math.max(findings[i].start, at);
    let end = findings[i].end;
    const categories = new Set([findings[i].category]);
    while (i + 1 < findings.length && findings[i + 1].start < end) {
      end = Math.max(end, findings[++i].end);
      categories.add(findings[i].category);
    }
    if (end <= start) continue;
    out += text.slice(at, start) +
      `[toolguard: removed text addressed to the model (${[...categories].join(", ")})]`;
    at = end;
  }
  return out + text.slice(at);
}

/** What kind of thing a description belongs to. */
export type DescribedKind = "tool" | "prompt" | "resource" | "resource_template" | "server";

/** A flagged description: whose, where, and what was found. */
export interface FlaggedDescription {
  /** What it describes. */
  kind: DescribedKind;
  /** The tool's, prompt's or resource's name (the server's name for `instructions`). */
  name: string;
  /**
   * JSON Pointer of the description in the result, e.g. `/tools/2/inputSchema/properties/path/description`.
   */
  pointer: string;
  /** The findings, with offsets into that description. */
  findings: DescriptionFinding[];
}

/** A listing after cleaning: the result to pass on (the original when nothing was flagged), and what was. */
export interface CleanedListing {
  /** The result to pass on: the given object when nothing was flagged, else a cleaned copy. */
  result: unknown;
  /** The flagged descriptions, up to `LISTED` of them (the rest are cleaned, not listed). */
  flagged: FlaggedDescription[];
  /** Names of the entries hidden (with `strict`). */
  hidden: string[];
}

/** The array of entries and their kind in a listing result, by MCP method. */
const LISTINGS: Record<string, { key: string; kind: DescribedKind }> = {
  "tools/list": { key: "tools", kind: "tool" },
  "prompts/list": { key: "prompts", kind: "prompt" },
  "resources/list": { key: "resources", kind: "resource" },
  "resources/templates/list": { key: "resourceTemplates", kind: "resource_template" },
};

/** True when `method`'s result carries descriptions {@linkcode cleanListing} checks. */
export function describesThings(method: string): boolean {
  return method === "initialize" || Object.hasOwn(LISTINGS, method);
}

/**
 * A container met while walking a listing entry: where it sits, and its copy once something in it changed.
 */
interface Place {
  value: Record<string, unknown> | unknown[];
  parent: Place | null;
  key: string | number;
  copy?: Record<string, unknown> | unknown[];
}

/** The copy of `place`, made (with the copies of the containers above it) on first use. */
function writable(place: Place): Record<string | number, unknown> {
  const chain: Place[] = [];
  for (let p: Place | null = place; p !== null && p.copy === undefined; p = p.parent) chain.push(p);
  for (let i = chain.length - 1; i >= 0; i--) {
    const p = chain[i];
    p.copy = Array.isArray(p.value) ? p.value.slice() : { ...p.value };
    if (p.parent !== null) (p.parent.copy as Record<string | number, unknown>)[p.key] = p.copy;
  }
  return place.copy as Record<string | number, unknown>;
}

/** The JSON Pointer of member `key` of `place`, below `base`. */
function pointerOf(base: string, place: Place, key: string): string {
  const keys: string[] = [escapePointer(key)];
  for (let p: Place | null = place; p !== null && p.parent !== null; p = p.parent) {
    keys.push(typeof p.key === "number" ? String(p.key) : escapePointer(p.key));
  }
  return `${base}/${keys.reverse().join("/")}`;
}

/**
 * The members that hold text a client shows or hands the model: descriptions, and titles (see `checkTitle`).
 */
type TextKey = "description" | "title";

/**
 * Check and clean every `description` and `title` string under `value`, in document order; returns the
 * cleaned copy (the given value when nothing changed). Iterative: no depth of nesting hides a description (a
 * recursive walk stopped at 32 levels, and a deeper one would overflow the stack).
 */
function cleanTree(
  value: unknown,
  pointer: string,
  check: (text: string, key: TextKey, pointer: () => string) => string | null,
): unknown {
  if (!Array.isArray(value) && !isRecord(value)) return value;
  const root: Place = { value, parent: null, key: "" };
  const stack: ({ place: Place } | { text: string; key: string; kind: TextKey; in: Place })[] = [{
    place: root,
  }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ("text" in item) {
      const cleaned = check(item.text, item.kind, () => pointerOf(pointer, item.in, item.key));
      if (cleaned !== null) writable(item.in)[item.key] = cleaned;
      continue;
    }
    const place = item.place;
    const v = place.value;
    if (Array.isArray(v)) refuseSparse(v, `an array in ${pointer}`);
    const entries: [string | number, unknown][] = Array.isArray(v) ? [...v.entries()] : Object.entries(v);
    // In `properties` (and the like) keys are names: a property named `default` is a schema, not data.
    const names = !Array.isArray(v) && typeof place.key === "string" && SCHEMA_MAPS.has(place.key);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      const kind = typeof child === "string" ? textKind(key) : undefined;
      if (kind !== undefined) {
        stack.push({ text: child as string, key: key as string, kind, in: place });
      } else if (!names && typeof key === "string" && DATA_KEYWORDS.has(key)) {
        continue; // (data, not text to a model)
      } else if (Array.isArray(child) || isRecord(child)) {
        stack.push({ place: { value: child, parent: place, key } });
      }
    }
  }
  return root.copy ?? value;
}

/**
 * What text a key names: a description or a title, spelled so or but for case (`Description`, `TITLE`): a
 * client that matches names ignoring case (Go's `encoding/json` into a struct, cJSON's `cJSON_GetObjectItem`)
 * may show the model such a key in the place of the one spelled right, which `JSON.parse` keeps beside it.
 */
function textKind(key: string | number): TextKey | undefined {
  if (key === "description" || key === "title") return key;
  if (typeof key !== "string") return undefined;
  return spells(key, "description") ? "description" : spells(key, "title") ? "title" : undefined;
}

/**
 * True when `key` is `name` spelled so or but for case, as `foldCase` folds (`TITLE`, `Instructions`,
 * `serverinfo`): what a client that ignores case reads as `name`. A key of another length is not folded.
 */
function spells(key: string, name: string): boolean {
  return key === name || (key.length === name.length && foldCase(key) === foldCase(name));
}

/** The titles tools carry (`title`, `annotations.title`): descriptions name tools by them too. */
function titlesOf(entries: readonly unknown[]): string[] {
  const titles: string[] = [];
  for (const entry of entries) {
    if (!isRecord(entry)) continue;
    if (typeof entry.title === "string") titles.push(entry.title);
    if (isRecord(entry.annotations) && typeof entry.annotations.title === "string") {
      titles.push(entry.annotations.title);
    }
  }
  return titles;
}

/**
 * A listed entry (at `at`) as JSON sends it. One the session parsed from JSON text (`parsed`) is plain data
 * and goes as it is. One built in code is read once, cleaned and handed on as {@linkcode copyAsSent} copies
 * it, as the judge reads a tool (see compileTools): its own members may be clean where what JSON sends (a
 * `toJSON`'s result, a boxed string) is poisoned, and a getter read again may answer other than what was
 * judged. Throws as {@linkcode refuseGraph} does, for either form.
 */
function readAsSent(entry: unknown, at: string, parsed: boolean): unknown {
  if (parsed) return entry; // (JSON text holds no loop, no shared object, no toJSON, no box, no getter)
  refuseGraph(entry, at);
  const sent = copyAsSent(entry);
  refuseGraph(sent, at);
  return sent;
}

/**
 * Throws a `RangeError` when the listed entry at `at`, built in code, holds itself or shares its objects past
 * measure (see {@linkcode schemaGraphProblem}): a walk over it as a tree would never end.
 */
function refuseGraph(entry: unknown, at: string): void {
  const problem = schemaGraphProblem(entry);
  if (problem !== null) throw new RangeError(`the entry at ${at}: ${problem.message}`);
}

/**
 * How many flagged descriptions a listing reports, and the pointer characters they may carry in all: past
 * either, the rest are still cleaned, not listed (a hostile schema can nest thousands of them thousands
 * deep).
 */
const LISTED = { descriptions: 1000, pointerChars: 1 << 20 };

/**
 * Check the descriptions and titles in the result of a listing (`tools/list`, `prompts/list`,
 * `resources/list`, `resources/templates/list`) or of `initialize` (the server's `instructions` and
 * `serverInfo.title`, also spelled in another case, as `Instructions`): flagged spans (a flagged title whole) are replaced by a marker; with `strict` a
 * flagged entry is hidden instead. With `parsed` (the session parsed the result from JSON text) its entries
 * are read as they are; else each is read once, as JSON sends it (see readAsSent), and handed on so. Throws a
 * `RangeError` for a listing built in code that JSON text cannot hold and a walk would not end on: entries in
 * an array of more than 100 000 slots with holes, an entry that holds itself or shares its objects past
 * measure.
 */
export function cleanListing(
  method: string,
  result: unknown,
  options: DescriptionCheckOptions & { strict: boolean; parsed?: boolean },
): CleanedListing {
  const flagged: FlaggedDescription[] = [];
  const hidden: string[] = [];
  if (!isRecord(result)) return { result, flagged, hidden };
  let found = 0; // flagged descriptions, listed or not
  let pointerChars = 0;
  const checker =
    (kind: DescribedKind, name: string) =>
    (text: string, key: TextKey, pointer: () => string): string | null => {
      const findings = key === "title" ? checkTitle(text, options) : checkDescription(text, options);
      if (findings.length === 0) return null;
      found++;
      if (flagged.length < LISTED.descriptions && pointerChars < LISTED.pointerChars) {
        const at = pointer();
        pointerChars += at.length;
        flagged.push({ kind, name, pointer: at, findings });
      }
      return cleanDescription(text, findings);
    };
  if (method === "initialize") {
    const info = isRecord(result.serverInfo) ? result.serverInfo : undefined;
    const check = checker("server", String(info?.name ?? ""));
    // (one built in code goes on as read here, once: a getter read again may answer other than what was judged)
    const members = Object.entries(result);
    let out = options.parsed === true ? result : Object.fromEntries(members);
    // Spelled so or but for case (see textKind): `Instructions` beside `instructions` is what such a client
    // hands the model.
    for (const [key, value] of members) {
      if (typeof value === "string" && spells(key, "instructions")) {
        const cleaned = check(value, "description", () => `/${escapePointer(key)}`);
        if (cleaned !== null) out = { ...out, [key]: cleaned };
      } else if (isRecord(value) && spells(key, "serverInfo")) {
        // The server's title (MCP 2025-06-18), which a client shows as its name.
        const titles = Object.entries(value);
        let cleanedInfo = options.parsed === true ? value : Object.fromEntries(titles);
        for (const [name, title] of titles) {
          if (typeof title !== "string" || !spells(name, "title")) continue;
          const cleaned = check(title, "title", () => `/${escapePointer(key)}/${escapePointer(name)}`);
          if (cleaned !== null) cleanedInfo = { ...cleanedInfo, [name]: cleaned };
        }
        if (cleanedInfo !== value) out = { ...out, [key]: cleanedInfo };
      }
    }
    return { result: out, flagged, hidden };
  }
  const listing = LISTINGS[method];
  const entries = listing ? result[listing.key] : undefined;
  if (!listing || !Array.isArray(entries)) return { result, flagged, hidden };
  refuseSparse(entries, `the result's ${listing.key}`);
  if (method === "tools/list" && options.declared !== null) {
    options = { ...options, declared: new Set([...options.declared, ...titlesOf(entries)]) };
  }
  const out: unknown[] = [];
  let changed = false;
  entries.forEach((given, i) => {
    const at = `/${listing.key}/${i}`;
    const entry = readAsSent(given, at, options.parsed === true);
    const name = isRecord(entry) && typeof entry.name === "string" ? entry.name : String(i);
    const before = found;
    const cleaned = cleanTree(entry, at, checker(listing.kind, name));
    if (found > before && options.strict) {
      hidden.push(name);
      changed = true;
      return;
    }
    if (cleaned !== given) changed = true;
    out.push(cleaned);
  });
  return { result: changed ? { ...result, [listing.key]: out } : result, flagged, hidden };
}
