/**
 * Format assertions for the JSON Schema engine: date-time, date, time, email, uri, uuid, ipv4, ipv6,
 * hostname. Pure functions, linear-time regular expressions only. URIs follow RFC 3986 appendix A.
 *
 * @module
 */

const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:z|([+-])(\d{2}):(\d{2}))$/i;

function isDate(s: string): boolean {
  // hand-parsed and unrolled: this runs on every date argument, so no regex, no loop, no allocation
  if (s.length !== 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false;
  const y0 = s.charCodeAt(0) - 48, y1 = s.charCodeAt(1) - 48, y2 = s.charCodeAt(2) - 48;
  const y3 = s.charCodeAt(3) - 48, m0 = s.charCodeAt(5) - 48, m1 = s.charCodeAt(6) - 48;
  const d0 = s.charCodeAt(8) - 48, d1 = s.charCodeAt(9) - 48;
  // (x >>> 0) > 9 is true for anything but a digit
  if (
    (y0 >>> 0) > 9 || (y1 >>> 0) > 9 || (y2 >>> 0) > 9 || (y3 >>> 0) > 9 || (m0 >>> 0) > 9 ||
    (m1 >>> 0) > 9 || (d0 >>> 0) > 9 || (d1 >>> 0) > 9
  ) {
    return false;
  }
  const y = y0 * 1000 + y1 * 100 + y2 * 10 + y3, mo = m0 * 10 + m1, d = d0 * 10 + d1;
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= (mo === 2 && leap ? 29 : DAYS[mo]);
}

function isTime(s: string): boolean {
  const m = TIME.exec(s);
  if (!m) return false;
  const h = +m[1], mi = +m[2], sec = +m[3];
  const sign = m[4] === "-" ? -1 : 1;
  const oh = m[5] === undefined ? 0 : +m[5], om = m[6] === undefined ? 0 : +m[6];
  if (h > 23 || mi > 59 || oh > 23 || om > 59 || sec > 60) return false;
  if (sec < 60) return true;
  // a leap second is only valid at 23:59:60 UTC
  const utc = (((h * 60 + mi - sign * (oh * 60 + om)) % 1440) + 1440) % 1440;
  return utc === 1439;
}

function isDateTime(s: string): boolean {
  const t = s.search(/[tT]/);
  return t === 10 && isDate(s.slice(0, 10)) && isTime(s.slice(11));
}

const SCHEME = /^[a-z][a-z0-9+\-.]*:/i;
const PCHARS = /^(?:[a-z0-9\-._~!$&'()*+,;=:@/]|%[0-9a-f]{2})*$/i;
const QCHARS = /^(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*$/i;
const USERINFO = /^(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*$/i;
const REGNAME = /^(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*$/i;
const IPFUTURE = /^v[0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+$/i;

/** An absolute URI per RFC 3986 (scheme required, fragment allowed). */
function isUri(s: string): boolean {
  const m = SCHEME.exec(s);
  if (!m) return false;
  let rest = s.slice(m[0].length);
  let frag = "";
  const h = rest.indexOf("#");
  if (h >= 0) {
    frag = rest.slice(h + 1);
    rest = rest.slice(0, h);
  }
  let query = "";
  const q = rest.indexOf("?");
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!QCHARS.test(frag) || !QCHARS.test(query)) return false;
  if (rest.startsWith("//")) {
    const slash = rest.indexOf("/", 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    const path = slash < 0 ? "" : rest.slice(slash);
    if (!PCHARS.test(path)) return false;
    let hostport = authority;
    const at = authority.lastIndexOf("@");
    if (at >= 0) {
      if (!USERINFO.test(authority.slice(0, at))) return false;
      hostport = authority.slice(at + 1);
    }
    let host = hostport;
    if (hostport.startsWith("[")) {
      const close = hostport.indexOf("]");
      if (close < 0) return false;
      host = hostport.slice(1, close);
      const port = hostport.slice(close + 1);
      if (port !== "" && !/^:\d*$/.test(port)) return false;
      return isIpv6(host) || IPFUTURE.test(host);
    }
    const colon = hostport.lastIndexOf(":");
    if (colon >= 0) {
      if (!/^\d*$/.test(hostport.slice(colon + 1))) return false;
      host = hostport.slice(0, colon);
    }
    return REGNAME.test(host);
  }
  // path-absolute or path-rootless: no authority, so "//" cannot start it
  return PCHARS.test(rest);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const HOSTLABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

function isIpv4(s: string): boolean {
  return IPV4.test(s);
}

function isIpv6(s: string): boolean {
  if (s.length > 45 || !/^[0-9a-fA-F:.]+$/.test(s)) return false;
  let body = s;
  let groupsNeeded = 8;
  const lastColon = body.lastIndexOf(":");
  const tail = body.slice(lastColon + 1);
  if (tail.includes(".")) {
    if (!isIpv4(tail)) return false;
    body = body.slice(0, lastColon + 1) + "0:0";
  }
  const dbl = body.indexOf("::");
  if (dbl !== body.lastIndexOf("::")) return false;
  const hex = /^[0-9a-fA-F]{1,4}$/;
  if (dbl < 0) {
    const parts = body.split(":");
    return parts.length === groupsNeeded && parts.every((p) => hex.test(p));
  }
  const left = body.slice(0, dbl), right = body.slice(dbl + 2);
  const lp = left === "" ? [] : left.split(":");
  const rp = right === "" ? [] : right.split(":");
  if (![...lp, ...rp].every((p) => hex.test(p))) return false;
  groupsNeeded -= 1;
  return lp.length + rp.length <= groupsNeeded;
}

function isHostname(s: string): boolean {
  const h = s.endsWith(".") ? s.slice(0, -1) : s;
  if (h.length === 0 || h.length > 253) return false;
  return h.split(".").every((l) => HOSTLABEL.test(l));
}

const LOCAL_ATOM = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/i;
const LOCAL_QUOTED = /^"(?:[^"\\\r\n]|\\.)*"$/;

/** A common, strict subset of valid addresses, checked in one pass before the full rules. */
const EMAIL_FAST =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

const alnum = (c: number) => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 122);

/**
 * The commonest addresses (letters, digits, `._+-` before the @; hostname labels after it), by one loop.
 * True only for text {@link EMAIL_FAST} accepts too; false means "not decided here".
 */
function plainEmail(s: string): boolean {
  const n = s.length;
  if (n > 64) return false;
  let i = 0, prev = 46; // as if after a dot: no leading dot, no leading hyphen
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 64) break;
    if (c === 46) {
      if (prev === 46) return false;
    } else if (!(alnum(c) || c === 95 || c === 43 || c === 45)) return false;
    prev = c;
  }
  if (i === 0 || i >= n - 1 || prev === 46) return false;
  prev = 46;
  for (i++; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (prev === 46 || prev === 45) return false;
    } else if (c === 45) {
      if (prev === 46) return false;
    } else if (!alnum(c)) return false;
    prev = c;
  }
  return prev !== 46 && prev !== 45;
}

function isEmail(s: string): boolean {
  if (plainEmail(s)) return true;
  // no "@" with text on both sides: no regex can accept it (the commonest wrong value)
  const at = s.lastIndexOf("@");
  if (at <= 0 || at === s.length - 1) return false;
  // at most 64 characters in all keeps every label and the local part within their limits
  if (s.length <= 64 && EMAIL_FAST.test(s)) return true;
  const local = s.slice(0, at), domain = s.slice(at + 1);
  if (local.length > 64 || !(LOCAL_ATOM.test(local) || LOCAL_QUOTED.test(local))) return false;
  if (domain.startsWith("[") && domain.endsWith("]")) {
    const lit = domain.slice(1, -1);
    return lit.slice(0, 5).toLowerCase() === "ipv6:" ? isIpv6(lit.slice(5)) : isIpv4(lit);
  }
  return isHostname(domain) && !domain.endsWith(".");
}

/** The formats the engine asserts, by name. */
export const FORMATS: Readonly<Record<string, (s: string) => boolean>> = {
  "date-time": isDateTime,
  date: isDate,
  time: isTime,
  email: isEmail,
  uri: isUri,
  uuid: (s) => UUID.test(s),
  ipv4: isIpv4,
  ipv6: isIpv6,
  hostname: isHostname,
};
