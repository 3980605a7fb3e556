/**
 * Format assertions for the JSON Schema engine: date-time, date, time, email, uri, uuid, ipv4, ipv6,
 * hostname. Pure functions, linear-time regular expressions only. URIs follow RFC 3986 appendix A.
 *
 * @module
 */

const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:z|([+-])(\d{2}):(\d{2}))$/i;

function isDate(s: string): boolean {
  // hand-parsed: this runs on every date argument, so no regex and no allocation
  if (s.length !== 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false;
  let y = 0, mo = 0, d = 0;
  for (let i = 0; i < 10; i++) {
    if (i === 4 || i === 7) continue;
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return false;
    if (i < 4) y = y * 10 + c;
    else if (i < 7) mo = mo * 10 + c;
    else d = d * 10 + c;
  }
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

function isEmail(s: string): boolean {
  // at most 64 characters in all keeps every label and the local part within their limits
  if (s.length <= 64 && EMAIL_FAST.test(s)) return true;
  const at = s.lastIndexOf("@");
  if (at <= 0 || at === s.length - 1) return false;
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
