/**
 * A request target's path and query as the WHATWG URL parser reads them; a plain target is split without the parser,
 * which cost more than routing a small call (request-target.test.ts holds both readings side by side). A non-absolute
 * target is always a path (`//s/x`, RFC 9112 origin-form). routePath is the one reading that routes choose by and the
 * log redacts by, so no spelling a route accepts escapes the redaction.
 */

export interface RequestTarget {
  readonly pathname: string;
  readonly searchParams: URLSearchParams;
}

/** `/`, then only characters the URL parser leaves alone in a path and a query, with no `#`. */
const PLAIN_TARGET = /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*)?$/;
/** A segment the URL parser would resolve: `.` or `..`, plain or percent-encoded. */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?=\/|\?|$)/i;

class PlainTarget implements RequestTarget {
  #searchParams: URLSearchParams | undefined;

  constructor(
    readonly pathname: string,
    private readonly search: string,
  ) {}

  get searchParams(): URLSearchParams {
    return (this.#searchParams ??= new URLSearchParams(this.search));
  }
}

/** A target in absolute form: a scheme, then `:`. */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export function requestTarget(raw: string): RequestTarget | null {
  if (PLAIN_TARGET.test(raw)) {
    const question = raw.indexOf('?');
    const pathname = question < 0 ? raw : raw.slice(0, question);
    if (!DOT_SEGMENT.test(pathname)) return new PlainTarget(pathname, question < 0 ? '' : raw.slice(question));
  }
  try {
    if (ABSOLUTE_FORM.test(raw)) return new URL(raw);
    // After an authority of its own, a target that starts with `//` (or a backslash, which the
    // parser reads as a slash) stays a path.
    return new URL(`http://host${raw.startsWith('/') || raw.startsWith('\\') ? '' : '/'}${raw}`);
  } catch {
    return null;
  }
}

// ---- Routes ------------------------------------------------------------------------------------

/** A path routePath leaves as it is: no `//`, and a first segment without `%` or capitals. */
const ROUTE_AS_SENT = /^\/[^/%A-Z]*(?:\/|$)/;

/** `text` percent-decoded, or as it is when it is not valid percent-encoding. */
export function decodedOrAsSent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The path as routes read it: slashes collapsed, the first segment percent-decoded and lower-cased (`/%73/x` is `/s/x`); the rest as sent. */
export function routePath(pathname: string): string {
  if (ROUTE_AS_SENT.test(pathname) && !pathname.includes('//')) return pathname;
  const collapsed = pathname.replace(/\/{2,}/g, '/');
  const end = collapsed.indexOf('/', 1);
  const route = end < 0 ? collapsed.slice(1) : collapsed.slice(1, end);
  // The route decoded may hold slashes itself (`/s%2Fx`): read again, once.
  const decoded = `/${decodedOrAsSent(route)}${end < 0 ? '' : collapsed.slice(end)}`.replace(/\/{2,}/g, '/');
  const routeEnd = decoded.indexOf('/', 1);
  return routeEnd < 0 ? decoded.toLowerCase() : decoded.slice(0, routeEnd).toLowerCase() + decoded.slice(routeEnd);
}

/** Routes whose paths carry a capability after the route: share codes and cover tags, link codes, download, preview and ZIP grants, thumbnail keys (and /files/, kept for them). */
const CAPABILITY_ROUTE = /^\/(s|l|d|v|t|z|files)\//;
const CAPABILITY_ROUTE_NAMES: ReadonlySet<string> = new Set(['s', 'l', 'd', 'v', 't', 'z', 'files']);
/** A path's first segment when it is plain: not empty, no percent-encoding. */
const PLAIN_FIRST_SEGMENT = /^\/([^/%]+)(?:\/|$)/;

/** A path as the log may name it: a capability route as the route only (`/s/…`, `/d/…`, `/v/…`), any other as sent. */
export function loggablePath(pathname: string): string {
  // Most paths start with a plain segment no capability route has in any spelling (route names have 1 or 5 characters).
  const end = pathname.indexOf('/', 1);
  const length = (end < 0 ? pathname.length : end) - 1;
  const percent = pathname.indexOf('%');
  if (pathname.charCodeAt(0) === 47 && length > 0 && length !== 1 && length !== 5 && (percent < 0 || percent > length)) return pathname;
  const first = PLAIN_FIRST_SEGMENT.exec(pathname);
  if (first && !CAPABILITY_ROUTE_NAMES.has(first[1].toLowerCase())) return pathname;
  const route = CAPABILITY_ROUTE.exec(routePath(pathname));
  return route ? `/${route[1]}/…` : pathname;
}
