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

export function requestTarget(raw: string): RequestTarget | null {
  if (PLAIN_TARGET.test(raw)) {
    const question = raw.indexOf('?');
    const pathname = question < 0 ? raw : raw.slice(0, question);
    if (!DOT_SEGMENT.test(pathname)) return new PlainTarget(pathname, question < 0 ? '' : raw.slice(question));
  }
  try {
    return new URL(raw, 'http://host');
  } catch {
    return null;
  }
}
