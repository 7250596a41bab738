/**
 * A streaming ZIP writer (APPNOTE 6.3): entries stored (no compression: most files are compressed
 * already, and the CPU goes to the transfer), UTF-8 names, CRC-32 and sizes in a data descriptor
 * after the bytes, ZIP64 records wherever a size, an offset or the entry count needs them.
 * Memory is the central directory only (about 100 bytes an entry); bytes pass through with backpressure.
 * A body that can read into a given buffer (a local-disk blob) is read into a ring of reused buffers, each
 * refilled once the socket has sent it: no garbage per read, so the RSS stays flat whatever the archive's size.
 */
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { crc32 } from 'node:zlib';

const UTF8_NAMES = 1 << 11;
const DATA_DESCRIPTOR = 1 << 3;
const VERSION_MADE_BY = (3 << 8) | 63; // Unix, APPNOTE 6.3
const NEEDS_20 = 20;
const NEEDS_ZIP64 = 45;
const MAX_32 = 0xffffffff;
const MAX_16 = 0xffff;
const UNIX_DIRECTORY = 0o040755;
const UNIX_FILE = 0o100644;
/** Reads of 256 KiB, four in flight at most: 1 MiB per archive being sent. */
const RING_BYTES = 256 * 1024;
const RING_SIZE = 4;

/** A body read into the caller's buffer, 0 at its end (the local disk store's blobs). */
type ReadsInto = Readable & { readInto(target: Buffer): Promise<number> };

interface CentralRecord {
  readonly name: Buffer;
  readonly directory: boolean;
  readonly dosTime: number;
  readonly dosDate: number;
  readonly unixTime: number;
  readonly crc: number;
  readonly size: number;
  readonly offset: number;
}

export class ZipWriter {
  private offset = 0;
  private readonly records: CentralRecord[] = [];
  /** Made at the first body that reads into buffers: each with the promise of its release by the socket. */
  private ring: { buffer: Buffer; sent: Promise<unknown> }[] = [];
  private readonly closed: Promise<void>;

  constructor(private readonly out: Writable) {
    this.closed = new Promise((resolve) => out.once('close', resolve));
  }

  async directory(path: string, mtime: Date): Promise<void> {
    const name = Buffer.from(path.endsWith('/') ? path : `${path}/`, 'utf8');
    const record = { ...this.stamp(name, mtime, true), crc: 0, size: 0, offset: this.offset };
    await this.write(localHeader(record, 0));
    this.records.push(record);
  }

  /** Writes `size` bytes from `body`; a body that ends early or runs long is an error (the archive is then cut). */
  async file(path: string, mtime: Date, size: number, body: Readable): Promise<void> {
    const name = Buffer.from(path, 'utf8');
    const start = { ...this.stamp(name, mtime, false), offset: this.offset };
    await this.write(localHeader({ ...start, crc: 0, size: 0 }, DATA_DESCRIPTOR));
    const { crc, written } = 'readInto' in body ? await this.copyThroughRing(body as ReadsInto, size) : await this.copyStream(body, size);
    if (written !== size) {
      body.destroy();
      throw new Error(`zip entry ${path}: ${written} bytes read where ${size} were expected`);
    }
    const descriptor = Buffer.alloc(size >= MAX_32 ? 24 : 16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(crc, 4);
    if (size >= MAX_32) {
      descriptor.writeBigUInt64LE(BigInt(size), 8);
      descriptor.writeBigUInt64LE(BigInt(size), 16);
    } else {
      descriptor.writeUInt32LE(size, 8);
      descriptor.writeUInt32LE(size, 12);
    }
    await this.write(descriptor);
    this.records.push({ ...start, crc, size });
  }

  /** The central directory and its end records; the caller ends the output. */
  async finish(): Promise<void> {
    const start = this.offset;
    for (const record of this.records) await this.write(centralHeader(record));
    const length = this.offset - start;
    const count = this.records.length;
    if (count >= MAX_16 || length >= MAX_32 || start >= MAX_32) {
      const zip64End = Buffer.alloc(56);
      zip64End.writeUInt32LE(0x06064b50, 0);
      zip64End.writeBigUInt64LE(44n, 4);
      zip64End.writeUInt16LE(VERSION_MADE_BY, 12);
      zip64End.writeUInt16LE(NEEDS_ZIP64, 14);
      zip64End.writeBigUInt64LE(BigInt(count), 24);
      zip64End.writeBigUInt64LE(BigInt(count), 32);
      zip64End.writeBigUInt64LE(BigInt(length), 40);
      zip64End.writeBigUInt64LE(BigInt(start), 48);
      const locator = Buffer.alloc(20);
      locator.writeUInt32LE(0x07064b50, 0);
      locator.writeBigUInt64LE(BigInt(this.offset), 8);
      locator.writeUInt32LE(1, 16);
      await this.write(Buffer.concat([zip64End, locator]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(Math.min(count, MAX_16), 8);
    end.writeUInt16LE(Math.min(count, MAX_16), 10);
    end.writeUInt32LE(Math.min(length, MAX_32), 12);
    end.writeUInt32LE(Math.min(start, MAX_32), 16);
    await this.write(end);
  }

  /** Stops once more than `size` bytes came. */
  private async copyStream(body: Readable, size: number): Promise<{ crc: number; written: number }> {
    let crc = 0;
    let written = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      crc = crc32(chunk, crc);
      written += chunk.length;
      if (written > size) break;
      await this.write(chunk);
    }
    return { crc, written };
  }

  /** Each buffer is refilled only after the socket has taken it (its write callback) or closed; reads stop one byte past `size`. */
  private async copyThroughRing(body: ReadsInto, size: number): Promise<{ crc: number; written: number }> {
    if (this.ring.length === 0) this.ring = Array.from({ length: RING_SIZE }, () => ({ buffer: Buffer.allocUnsafeSlow(RING_BYTES), sent: Promise.resolve() }));
    let crc = 0;
    let written = 0;
    try {
      for (let i = 0; ; i = (i + 1) % RING_SIZE) {
        const slot = this.ring[i];
        await slot.sent;
        if (this.out.destroyed) throw new Error('zip output closed');
        const read = await body.readInto(slot.buffer.subarray(0, Math.min(RING_BYTES, size - written + 1)));
        written += read;
        if (read === 0 || written > size) break;
        const bytes = slot.buffer.subarray(0, read);
        crc = crc32(bytes, crc);
        this.offset += read;
        slot.sent = Promise.race([new Promise((resolve) => this.out.write(bytes, resolve)), this.closed]);
      }
    } finally {
      body.destroy();
    }
    return { crc, written };
  }

  private stamp(name: Buffer, mtime: Date, directory: boolean) {
    if (name.length > MAX_16) throw new Error('zip entry name too long');
    const { dosTime, dosDate } = dosDateTime(mtime);
    return { name, directory, dosTime, dosDate, unixTime: Math.max(0, Math.min(MAX_32, Math.floor(mtime.getTime() / 1000))) };
  }

  private async write(bytes: Buffer): Promise<void> {
    this.offset += bytes.length;
    if (!this.out.write(bytes)) await once(this.out, 'drain');
  }
}

function localHeader(record: CentralRecord, flags: number): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(NEEDS_20, 4);
  header.writeUInt16LE(UTF8_NAMES | flags, 6);
  header.writeUInt16LE(record.dosTime, 10);
  header.writeUInt16LE(record.dosDate, 12);
  header.writeUInt16LE(record.name.length, 26);
  return Buffer.concat([header, record.name]);
}

function centralHeader(record: CentralRecord): Buffer {
  const zip64 = record.size >= MAX_32 || record.offset >= MAX_32;
  // Info-ZIP's "UT" extra field: the modification time in UTC, which DOS times cannot say.
  const time = Buffer.alloc(9);
  time.writeUInt16LE(0x5455, 0);
  time.writeUInt16LE(5, 2);
  time.writeUInt8(1, 4);
  time.writeUInt32LE(record.unixTime, 5);
  const extra = zip64 ? Buffer.concat([time, zip64Extra(record)]) : time;
  const header = Buffer.alloc(46);
  header.writeUInt32LE(0x02014b50, 0);
  header.writeUInt16LE(VERSION_MADE_BY, 4);
  header.writeUInt16LE(zip64 ? NEEDS_ZIP64 : NEEDS_20, 6);
  header.writeUInt16LE(UTF8_NAMES | (record.directory ? 0 : DATA_DESCRIPTOR), 8);
  header.writeUInt16LE(record.dosTime, 12);
  header.writeUInt16LE(record.dosDate, 14);
  header.writeUInt32LE(record.crc, 16);
  header.writeUInt32LE(zip64 ? MAX_32 : record.size, 20);
  header.writeUInt32LE(zip64 ? MAX_32 : record.size, 24);
  header.writeUInt16LE(record.name.length, 28);
  header.writeUInt16LE(extra.length, 30);
  header.writeUInt32LE(((record.directory ? UNIX_DIRECTORY : UNIX_FILE) << 16) >>> 0, 38);
  header.writeUInt32LE(zip64 ? MAX_32 : record.offset, 42);
  return Buffer.concat([header, record.name, extra]);
}

function zip64Extra(record: CentralRecord): Buffer {
  const extra = Buffer.alloc(28);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(24, 2);
  extra.writeBigUInt64LE(BigInt(record.size), 4);
  extra.writeBigUInt64LE(BigInt(record.size), 12);
  extra.writeBigUInt64LE(BigInt(record.offset), 20);
  return extra;
}

/** DOS date and time fields in UTC, clamped to 1980–2107 (the format's range). */
function dosDateTime(date: Date): { dosTime: number; dosDate: number } {
  const clamped = new Date(Math.min(Math.max(date.getTime(), Date.UTC(1980, 0, 1)), Date.UTC(2107, 11, 31, 23, 59, 58)));
  return {
    dosTime: (clamped.getUTCHours() << 11) | (clamped.getUTCMinutes() << 5) | (clamped.getUTCSeconds() >> 1),
    dosDate: ((clamped.getUTCFullYear() - 1980) << 9) | ((clamped.getUTCMonth() + 1) << 5) | clamped.getUTCDate(),
  };
}
