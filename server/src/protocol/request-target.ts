/**
 * The path and query of a request's target (the `req.url` of node:http), as the WHATWG URL parser
 * reads them. Every request needs its path to be routed; few need the query (HTTP GET forms read
 * theirs from the raw target, the documentation pages read `?WSDL` and the like).
 *
 * A plain target, `/` followed by characters that the URL parser keeps as they are, with no dot
 * segment, is split at its first `?` without the parser, which cost more than routing itself on a
 * small call; the query is parsed when first asked for. Anything else (an absolute or `//` target,
 * dot segments, percent-encoded dots, backslashes, spaces, non-ASCII) goes through `new URL` as
 * before, and null means the parser refused it. server/test/protocol/request-target.test.ts holds
 * both readings side by side.
 *
 * A target that is not in absolute form (`http://host/…`) is a path, whatever it starts with: `//s/x`
 * is the path `//s/x` (RFC 9112 origin-form), never a host `s` and a path `/x`, which would route
 * and log the code `x` as a path of its own.
 *
 * routePath is the one reading of a path that routes choose by and that the request log redacts by
 * (loggablePath): one function, so that no spelling a route accepts can escape the redaction.
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

/**
 * The path as routes read it: repeated slashes as one, and the first segment (the route: `s`, `d`,
 * `l`, `upload`, `UserService.asmx`, …) percent-decoded and in lower case, so `/S/x`, `//s/x`,
 * `/s//x` and `/%73/x` all read `/s/x`. What follows the route is left as sent: codes, tokens and
 * names are case-sensitive, and each route decodes its own segments.
 */
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

/** Routes whose paths carry a capability after the route: share codes and cover tags, link codes, download grants (and /files/, kept for them). */
const CAPABILITY_ROUTE = /^\/(s|l|d|t|files)\//;
const CAPABILITY_ROUTE_NAMES: ReadonlySet<string> = new Set(['s', 'l', 'd', 't', 'files']);
/** A path's first segment when it is plain: not empty, no percent-encoding. */
const PLAIN_FIRST_SEGMENT = /^\/([^/%]+)(?:\/|$)/;

/**
 * A request's path as the log may name it: a capability route as the route only (`/s/…`, `/l/…`,
 * `/d/…`), read as routes read it (routePath), whatever its spelling; any other path as sent.
 */
export function loggablePath(pathname: string): string {
  // Most paths (the services', the app's) start with a plain segment that names no capability route
  // in any spelling: they are logged as sent without routePath's work. A first segment without `%`
  // of a length no route name has (they have 1 or 5 characters) is one without a look at its text.
  const end = pathname.indexOf('/', 1);
  const length = (end < 0 ? pathname.length : end) - 1;
  const percent = pathname.indexOf('%');
  if (pathname.charCodeAt(0) === 47 && length > 0 && length !== 1 && length !== 5 && (percent < 0 || percent > length)) return pathname;
  const first = PLAIN_FIRST_SEGMENT.exec(pathname);
  if (first && !CAPABILITY_ROUTE_NAMES.has(first[1].toLowerCase())) return pathname;
  const route = CAPABILITY_ROUTE.exec(routePath(pathname));
  return route ? `/${route[1]}/…` : pathname;
}
