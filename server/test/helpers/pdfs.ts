/**
 * Small PDFs written by hand for the thumbnail tests: one page filled with a colour, its objects and
 * cross-reference table laid out as the PDF 1.4 specification says.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

interface PdfOptions {
  /** The page's size in points; default 200 × 100. */
  readonly mediaBox?: readonly [number, number];
  /** The fill colour of the rectangle over the whole page, RGB from 0 to 1; default dark green. */
  readonly rgb?: readonly [number, number, number];
  /** Open with this user password only (Standard security handler, revision 2). */
  readonly userPassword?: string;
  /** Also draw this many short lines (a compressed stream: some KB of file, minutes to draw). */
  readonly strokes?: number;
}

export function pagePdf(options: PdfOptions = {}): Buffer {
  const [width, height] = options.mediaBox ?? [200, 100];
  let content = `${(options.rgb ?? [0, 0.5, 0]).join(' ')} rg 0 0 ${width} ${height} re f`;
  let filter = '';
  if (options.strokes) {
    content = deflateSync(content + '\n0 0 m 1 1 l S'.repeat(options.strokes), { level: 9 }).toString('latin1');
    filter = ' /Filter /FlateDecode';
  }
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] /Contents 4 0 R >>`,
    `<< /Length ${content.length}${filter} >>\nstream\n${content}\nendstream`,
  ];
  const id = createHash('md5').update(content).digest();
  let trailer = '';
  if (options.userPassword !== undefined) {
    const { owner, user } = standardSecurity(options.userPassword, id);
    objects.push(`<< /Filter /Standard /V 1 /R 2 /O <${owner.toString('hex')}> /U <${user.toString('hex')}> /P -4 >>`);
    trailer = ` /Encrypt 5 0 R /ID [<${id.toString('hex')}> <${id.toString('hex')}>]`;
  }
  let text = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = text.length;
    text += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${trailer} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(text, 'latin1');
}

const PASSWORD_PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

/** The /O and /U entries of revision 2 (40-bit RC4) for `password` as user and owner password. */
function standardSecurity(password: string, id: Buffer): { owner: Buffer; user: Buffer } {
  const padded = Buffer.concat([Buffer.from(password, 'latin1'), PASSWORD_PADDING]).subarray(0, 32);
  const owner = rc4(createHash('md5').update(padded).digest().subarray(0, 5), padded);
  const permissions = Buffer.alloc(4);
  permissions.writeInt32LE(-4);
  const key = createHash('md5').update(Buffer.concat([padded, owner, permissions, id])).digest().subarray(0, 5);
  return { owner, user: rc4(key, PASSWORD_PADDING) };
}

function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 255];
  }
  return out;
}
