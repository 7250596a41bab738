import { describe, expect, it } from 'vitest';
import { linePosition, offsetAfter, readXml, XmlReadError } from '../../src/protocol/asmx/xml-reader';

const limits = { maxDepth: 32, maxElements: 1000 };
const read = (xml: string) => readXml(xml, limits);
const failure = (xml: string, limit = limits): XmlReadError => {
  try {
    readXml(xml, limit);
  } catch (error) {
    if (error instanceof XmlReadError) return error;
    throw error;
  }
  throw new Error('expected the document to be refused');
};

describe('XML reader', () => {
  it('resolves default and prefixed namespaces', () => {
    const root = read('<s:E xmlns:s="urn:s"><B xmlns="urn:d"><c/><x:d xmlns:x="urn:x"/></B></s:E>');
    expect(root).toMatchObject({ ns: 'urn:s', local: 'E' });
    const b = root.children[0];
    expect(b).toMatchObject({ ns: 'urn:d', local: 'B' });
    expect(b.children.map((c) => [c.ns, c.local])).toEqual([
      ['urn:d', 'c'],
      ['urn:x', 'd'],
    ]);
  });

  it('decodes the predefined entities, character references and CDATA', () => {
    const root = read('<a>&lt;&gt;&amp;&apos;&quot;&#x41;&#66;<![CDATA[<raw>&]]></a>');
    expect(root.text).toBe(`<>&'"AB<raw>&`);
  });

  it('normalizes line ends in text', () => {
    expect(read('<a>1\r\n2\r3</a>').text).toBe('1\n2\n3');
  });

  it('refuses any DOCTYPE, before reading what it declares', () => {
    expect(failure('<!DOCTYPE a><a/>').kind).toBe('dtd');
    expect(failure('<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e SYSTEM "http://127.0.0.1/x">]><a>&e;</a>').kind).toBe('dtd');
    expect(failure('<!DOCTYPE a><a/>').message).toBe('DTD is prohibited in this XML document.');
  });

  it('refuses entities it does not know', () => {
    expect(failure('<a>&e;</a>').message).toMatch(/^Reference to undeclared entity 'e'\./);
  });

  it('refuses documents nested deeper than the limit', () => {
    const deep = '<a>'.repeat(40) + '</a>'.repeat(40);
    expect(failure(deep).kind).toBe('limit');
  });

  it('refuses documents with more elements than the limit', () => {
    const wide = '<a>' + '<b/>'.repeat(1001) + '</a>';
    expect(failure(wide).kind).toBe('limit');
  });

  it('refuses characters XML cannot carry', () => {
    expect(failure('<a>\u0001</a>').kind).toBe('syntax');
    expect(failure('<a>&#1;</a>').kind).toBe('syntax');
  });

  it('refuses mismatched tags, undeclared prefixes and duplicate attributes', () => {
    expect(failure('<a></b>').message).toMatch(/does not match/);
    expect(failure('<p:a/>').message).toMatch(/undeclared prefix/);
    expect(failure('<a x="1" x="2"/>').message).toMatch(/duplicate attribute/);
  });

  it('says the root is missing for an empty document', () => {
    expect(failure('').message).toBe('Root element is missing.');
    expect(failure('  ').kind).toBe('empty');
  });

  it('reports the data at the root level of something that is not XML', () => {
    expect(failure('uid=1&x=2').message).toBe('Data at the root level is invalid. Line 1, position 1.');
  });

  it('keeps the partial tree of a truncated document', () => {
    const error = failure('<E><Body><Op><a>1</a>');
    expect(error.partialRoot?.children[0].children[0].local).toBe('Op');
  });

  it('reports positions after an element as .NET does: at the next name', () => {
    const source = '<a><uid>x</uid><token>t</token></a>';
    const uid = read(source).children[0];
    expect(linePosition(source, offsetAfter(source, uid))).toEqual({ line: 1, position: 17 });
  });

  it('counts lines for positions', () => {
    expect(linePosition('ab\ncd\nef', 7)).toEqual({ line: 3, position: 2 });
  });

  it('accepts a byte-order mark, a declaration, comments and processing instructions', () => {
    const root = read('\uFEFF<?xml version="1.0"?><!-- c --><?pi x?><a><!-- in --></a><!-- after -->');
    expect(root.local).toBe('a');
  });
});
