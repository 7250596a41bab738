import { describe, expect, it } from 'vitest';
import { renderDisco } from '../../src/protocol/asmx/disco';
import { createDocument, serializeDocument } from '../../src/protocol/asmx/xml-documents';

describe('documents built with xmlbuilder2', () => {
  it('are written as .NET writes them: declaration, two-space indentation, a space before />', () => {
    const root = createDocument('a', { x: '1', absent: undefined });
    root.ele('b').ele('c', { y: '2' });
    root.ele('d').txt('text');
    expect(serializeDocument(root)).toBe('<?xml version="1.0" encoding="utf-8"?>\n<a x="1">\n  <b>\n    <c y="2" />\n  </b>\n  <d>text</d>\n</a>');
  });

  it('escape attributes as the streaming writer does, entity-like text, TAB, LF and CR included', () => {
    const root = createDocument('a', { v: 'a&amp;b&#10;<>"\t\n\r\u0001' });
    expect(serializeDocument(root)).toContain('v="a&amp;amp;b&amp;#10;&lt;&gt;&quot;&#x9;&#xA;&#xD;\uFFFD"');
  });

  it('escape text as the streaming writer does: CR kept as a reference, invalid characters replaced', () => {
    const root = createDocument('a', {});
    root.txt('&lt; & <x>\r\uFFFE');
    expect(serializeDocument(root)).toContain('<a>&amp;lt; &amp; &lt;x&gt;&#xD;\uFFFD</a>');
  });

  it('carry a setting with such characters into the disco document escaped once', () => {
    const disco = renderDisco('FileService', { namespace: 'urn:a&amp;b', location: 'http://h/FileService.asmx' });
    expect(disco).toContain('xmlns:q1="urn:a&amp;amp;b"');
  });
});
