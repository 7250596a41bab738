/**
 * The documents made once per service and address (WSDL, disco), built with xmlbuilder2 in .NET XmlWriter's style;
 * result documents, made on every call, use the streaming xml-writer.ts.
 */
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import { XMLWriter } from 'xmlbuilder2/lib/writers/XMLWriter.js';
import { escapeAttribute, escapeText } from './xml-writer';

export type { XMLBuilder };

/** A new document whose root element is `name`; add to it, then pass it to `serializeDocument`. */
export function createDocument(name: string, attributes: Record<string, string | undefined>): XMLBuilder {
  return create({ version: '1.0', encoding: 'utf-8' }).ele(name, attributes);
}

/**
 * xmlbuilder2's serializer with the escaping of xml-writer.ts (.NET's): xmlbuilder2 would leave
 * "&amp;"-like text, TAB, LF and CR as they are. Pinned xmlbuilder2: these two steps are its own.
 */
// @ts-expect-error the two methods replace private steps of xmlbuilder2's serializer
class AsmxStyleWriter extends XMLWriter {
  protected override _serializeAttributeValue(value: string | null): string {
    return value === null ? '' : escapeAttribute(value);
  }

  protected override _serializeText(node: { data: string }): void {
    this.text(escapeText(node.data));
  }
}

export function serializeDocument(node: XMLBuilder): string {
  const document = node.doc();
  const writer = new AsmxStyleWriter(document.options, { prettyPrint: true, indent: '  ', newline: '\n', spaceBeforeSlash: true });
  return writer.serialize(document.node);
}
