import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loggablePath, requestTarget, routePath } from '../../src/protocol/request-target';

/** Targets clients send, and ones a parser might read differently from the WHATWG URL parser. */
const TARGETS = [
  '/',
  '/UserService.asmx',
  '/UserService.asmx?WSDL',
  '/userservice.ASMX?wsdl&x=1',
  '/UserService.asmx/GetFiles?uid=1001&token=abc-_~&dir=12&order=name&desc=0&sign=0f',
  '/FileService.asmx/FileSearch?keyword=%E6%8A%A5%E5%91%8A%20%26&x=a+b',
  '/d/AbC123_-/name.txt?e=1',
  '/s/code',
  '/upload/0123456789abcdef0123456789abcdef',
  '/assets/index-Ab12.js',
  '/.well-known/x',
  '/a/.hidden/..b/c.',
  '/a/./b',
  '/a/../b',
  '/a/%2e%2E/b',
  '/a/.%2e',
  '/..',
  '//evil.example/x',
  '//s/code',
  '\\\\s\\code',
  'http://other.example/UserService.asmx',
  '/a\\b',
  '/a b',
  '/ä',
  '/a#frag',
  "/q?a='1'&b=\"2\"",
  '/q?',
  '/q??a=1',
  '/%zz/%41',
  '',
  '*',
];

/** How the URL parser reads a request target: an absolute-form one as it is, any other as a path on this host. */
function parsed(target: string): URL {
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(target) ? new URL(target) : new URL(`http://host${/^[/\\]/.test(target) ? '' : '/'}${target}`);
}

describe('request target', () => {
  it.each(TARGETS)('%j reads as the URL parser reads it', (target) => {
    let expected: { pathname: string; query: string[][] } | null;
    try {
      const url = parsed(target);
      expected = { pathname: url.pathname, query: [...url.searchParams] };
    } catch {
      expected = null;
    }
    const read = requestTarget(target);
    expect(read && { pathname: read.pathname, query: [...read.searchParams] }).toEqual(expected);
  });

  it('a target that starts with // is a path, never a host and a shorter path', () => {
    expect(requestTarget('//s/code')?.pathname).toBe('//s/code');
    expect(requestTarget('//evil.example/UserService.asmx')?.pathname).toBe('//evil.example/UserService.asmx');
    expect(requestTarget('http://other.example/d/grant')?.pathname).toBe('/d/grant');
  });
});

describe('routePath: the path as routes read it', () => {
  it.each([
    ['/s/Code_-x', '/s/Code_-x'],
    ['/S/Code_-x', '/s/Code_-x'],
    ['//s/Code_-x', '/s/Code_-x'],
    ['/s//Code_-x', '/s/Code_-x'],
    ['///L///Code', '/l/Code'],
    ['/%73/Code', '/s/Code'],
    ['/%44/Grant/a%20b.txt', '/d/Grant/a%20b.txt'],
    ['/s%2FCode', '/s/Code'],
    ['/%2Fs/Code', '/s/Code'],
    ['/UserService.asmx/GetFiles', '/userservice.asmx/GetFiles'],
    ['/%zz/Code', '/%zz/Code'],
    ['/', '/'],
  ])('%j reads %j', (path, expected) => {
    expect(routePath(path)).toBe(expected);
  });

  it('leaves what follows the route as sent: codes are case-sensitive', () => {
    expect(routePath('/S/AbC/image/1/TaG')).toBe('/s/AbC/image/1/TaG');
  });
});

describe('loggablePath', () => {
  it('names a capability route only, in every spelling routePath reads as it', () => {
    for (const route of ['s', 'l', 'd', 'v']) {
      for (const spelling of [`/${route}/SECRET`, `/${route.toUpperCase()}/SECRET`, `//${route}/SECRET`, `/${route}//SECRET`, `/%${route.charCodeAt(0).toString(16)}/SECRET`, `/${route}%2FSECRET`]) {
        expect(loggablePath(spelling)).toBe(`/${route}/…`);
      }
    }
  });

  it('hides exactly the paths routePath reads as a capability route, whatever the path', () => {
    const segment = fc.constantFrom('s', 'S', 'l', 'd', 'D', 'v', 'V', '%76', 'files', 'Files', '%73', '%6C', 'sun', 'UserService.asmx', '', 'x%2F', 's%2Fy');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (segments) => {
        const path = `/${segments.join('/')}`;
        const capability = /^\/(s|l|d|v|files)\//.exec(routePath(path));
        expect(loggablePath(path)).toBe(capability ? `/${capability[1]}/…` : path);
      }),
      { numRuns: 2000 },
    );
  });

  it('names any other path as sent', () => {
    expect(loggablePath('/FileService.asmx/GetFiles')).toBe('/FileService.asmx/GetFiles');
    expect(loggablePath('/folder/12')).toBe('/folder/12');
    expect(loggablePath('/sun/x')).toBe('/sun/x');
  });
});
