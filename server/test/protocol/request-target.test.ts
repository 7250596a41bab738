import { describe, expect, it } from 'vitest';
import { requestTarget } from '../../src/protocol/request-target';

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

describe('request target', () => {
  it.each(TARGETS)('%j reads as the URL parser reads it', (target) => {
    let expected: { pathname: string; query: string[][] } | null;
    try {
      const url = new URL(target, 'http://host');
      expected = { pathname: url.pathname, query: [...url.searchParams] };
    } catch {
      expected = null;
    }
    const read = requestTarget(target);
    expect(read && { pathname: read.pathname, query: [...read.searchParams] }).toEqual(expected);
  });
});
