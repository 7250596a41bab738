/**
 * Content in S3 beyond the store's contract (content-store.test.ts): the FSS_S3_* settings, the
 * upload area in the bucket as @tus/s3-store leaves it (driven through its tus datastore, the
 * way the upload endpoint drives it), and `fss fsck` on a bucket. Against the test S3 server
 * (helpers/s3-server.ts), each test under a prefix of its own.
 */
import { randomBytes, createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@tus/server';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { main } from '../../src/cli';
import { ConfigError, loadConfig } from '../../src/config';
import { createS3Client, S3ContentStore } from '../../src/storage/content/s3-store';
import { S3UploadArea } from '../../src/storage/content/s3-upload-area';
import { startTestS3Server, testS3Settings, type TestS3Server } from '../helpers/s3-server';

const MiB = 1024 * 1024;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startTestS3Server();
});
afterAll(() => s3?.close());

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function bucketOfOwn() {
  const settings = testS3Settings(s3);
  const client = createS3Client(settings);
  onTestFinished(() => client.destroy());
  const store = new S3ContentStore(client, settings.bucket, settings.prefix);
  const area = new S3UploadArea(settings, store);
  /** Every object key under the prefix, and every unfinished multipart upload. */
  const everything = async () => {
    const objects: string[] = [];
    for await (const object of store.listObjects(settings.prefix)) objects.push(object.key.slice(settings.prefix.length));
    const uploads: string[] = [];
    for await (const upload of store.listMultipartUploads(settings.prefix)) uploads.push(upload.key.slice(settings.prefix.length));
    return { objects: objects.sort(), uploads };
  };
  return { settings, client, store, area, everything };
}

const newId = () => randomBytes(16).toString('hex');

describe('FSS_S3_* settings', () => {
  test('without a bucket, content stays on the local disk', () => {
    expect(loadConfig({}).s3).toBeUndefined();
  });

  test('a bucket switches content to S3; path style follows the endpoint unless set', () => {
    expect(loadConfig({ FSS_S3_BUCKET: 'files' }).s3).toEqual({
      endpoint: undefined,
      bucket: 'files',
      region: 'us-east-1',
      accessKeyId: undefined,
      secretAccessKey: undefined,
      forcePathStyle: false,
      prefix: '',
    });
    expect(
      loadConfig({
        FSS_S3_BUCKET: 'files',
        FSS_S3_ENDPOINT: 'http://minio:9000/',
        FSS_S3_REGION: 'eu-west-1',
        FSS_S3_ACCESS_KEY_ID: 'AKID',
        FSS_S3_SECRET_ACCESS_KEY: 'very-secret',
        FSS_S3_PREFIX: 'fss',
      }).s3,
    ).toEqual({ endpoint: 'http://minio:9000', bucket: 'files', region: 'eu-west-1', accessKeyId: 'AKID', secretAccessKey: 'very-secret', forcePathStyle: true, prefix: 'fss/' });
    expect(loadConfig({ FSS_S3_BUCKET: 'files', FSS_S3_ENDPOINT: 'https://s3.example', FSS_S3_FORCE_PATH_STYLE: 'false' }).s3?.forcePathStyle).toBe(false);
  });

  test('wrong settings are refused at start, and no message repeats the secret key', () => {
    const refused = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error(`accepted: ${JSON.stringify(env)}`);
    };
    expect(refused({ FSS_S3_ENDPOINT: 'http://minio:9000' })).toMatch(/FSS_S3_BUCKET is not/);
    expect(refused({ FSS_S3_BUCKET: 'files', FSS_S3_ENDPOINT: 'ftp://x' })).toMatch(/http or https/);
    expect(refused({ FSS_S3_BUCKET: 'files', FSS_S3_FORCE_PATH_STYLE: 'yes' })).toMatch(/true or false/);
    expect(refused({ FSS_S3_BUCKET: 'files', FSS_S3_PREFIX: '../x' })).toMatch(/FSS_S3_PREFIX/);
    expect(refused({ FSS_S3_BUCKET: 'files', FSS_S3_PREFIX: '/abs' })).toMatch(/FSS_S3_PREFIX/);
    expect(refused({ FSS_S3_BUCKET: 'a b' })).toMatch(/FSS_S3_BUCKET/);
    const lone = refused({ FSS_S3_BUCKET: 'files', FSS_S3_SECRET_ACCESS_KEY: 'very-secret' });
    expect(lone).toMatch(/go together/);
    expect(lone).not.toContain('very-secret');
  });
});

describe('uploads in the bucket (@tus/s3-store)', () => {
  test('an upload in several PATCHes: parts of 5 MiB and more, a shorter tail kept aside; then read, stored by copy, and removed without a trace', async () => {
    const { area, store, everything } = bucketOfOwn();
    const datastore = area.createDatastore();
    const id = newId();
    const data = randomBytes(6 * MiB + 1000);
    await datastore.create(new Upload({ id, size: data.length, offset: 0 }));
    expect(await area.readableBytes(id)).toBeNull();

    // A PATCH shorter than S3's 5 MiB part minimum: kept as `<id>.part` until the next one.
    expect(await datastore.write(Readable.from([data.subarray(0, 1000)]), id, 0)).toBe(1000);
    expect((await datastore.getUpload(id)).offset).toBe(1000);
    expect(await area.open(id)).toBeNull();
    expect((await everything()).objects).toEqual([`uploads/${id}.info`, `uploads/${id}.part`]);

    // The rest: the tail and the new bytes go up as parts, and the last byte assembles the object.
    expect(await datastore.write(Readable.from([data.subarray(1000)]), id, 1000)).toBe(data.length);
    expect(await area.readableBytes(id)).toBe(data.length);
    expect(sha(await bytesOf((await area.open(id))!))).toBe(sha(data));
    expect((await everything()).uploads).toEqual([]);

    const key = store.newKey(sha(data));
    await area.storeInto(id, key);
    expect(await area.open(id)).toBeNull();
    expect(sha(await bytesOf(await store.read(key)))).toBe(sha(data));

    await area.remove(id);
    expect(await everything()).toEqual({ objects: [`content/${key}`], uploads: [] });
    await area.remove(id);
  });

  test('an empty upload is an empty object as soon as it is created', async () => {
    const { area } = bucketOfOwn();
    const datastore = area.createDatastore();
    const id = newId();
    await datastore.create(new Upload({ id, size: 0, offset: 0 }));
    expect(await area.readableBytes(id)).toBe(0);
    expect((await bytesOf((await area.open(id))!)).length).toBe(0);
  });

  test('removing an unfinished upload aborts its multipart upload and deletes its record and tail', async () => {
    const { area, everything } = bucketOfOwn();
    const datastore = area.createDatastore();
    const id = newId();
    await datastore.create(new Upload({ id, size: 10 * MiB, offset: 0 }));
    // A part, then a tail.
    await datastore.write(Readable.from([randomBytes(5 * MiB + 10)]), id, 0);
    await datastore.write(Readable.from([randomBytes(100)]), id, 5 * MiB + 10);
    const left = await everything();
    expect(left.objects).toEqual([`uploads/${id}.info`, `uploads/${id}.part`]);
    expect(left.uploads).toEqual([`uploads/${id}`]);
    await area.remove(id);
    expect(await everything()).toEqual({ objects: [], uploads: [] });
  });

  test('a PATCH cut short keeps what arrived; the upload resumes from there on any datastore (another instance)', async () => {
    const { area } = bucketOfOwn();
    const id = newId();
    const data = randomBytes(7 * MiB);
    await area.createDatastore().create(new Upload({ id, size: data.length, offset: 0 }));
    const body = new PassThrough();
    const writing = area.createDatastore().write(body, id, 0);
    body.write(data.subarray(0, 2 * MiB));
    body.end();
    const reached = await writing;
    expect(reached).toBe(2 * MiB);
    // A fresh datastore knows nothing in memory: it learns the offset from the bucket.
    const other = area.createDatastore();
    expect((await other.getUpload(id)).offset).toBe(reached);
    expect(await other.write(Readable.from([data.subarray(reached)]), id, reached)).toBe(data.length);
    expect(sha(await bytesOf((await area.open(id))!))).toBe(sha(data));
  });

  test('idsUntouchedSince finds uploads by their objects and unfinished multipart uploads, and ignores strangers', async () => {
    const { area, client, settings } = bucketOfOwn();
    const datastore = area.createDatastore();
    const started = newId();
    await datastore.create(new Upload({ id: started, size: 100, offset: 0 }));
    const arrived = newId();
    await client.send(new PutObjectCommand({ Bucket: settings.bucket, Key: area.objectKeyOf(arrived), Body: 'bytes' }));
    await client.send(new PutObjectCommand({ Bucket: settings.bucket, Key: `${area.uploadsPrefix}not-an-upload`, Body: 'x' }));
    expect(await area.idsUntouchedSince(new Date(Date.now() - 3600_000))).toEqual([]);
    expect((await area.idsUntouchedSince(new Date(Date.now() + 60_000))).sort()).toEqual([started, arrived].sort());
  });
});

describe('fss fsck on a bucket', () => {
  test('lists the bucket’s content: finds an orphan object, and --repair deletes it', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fss-test-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const { settings, client, store } = bucketOfOwn();
    const env = {
      FSS_DATA_DIR: dataDir,
      FSS_S3_ENDPOINT: settings.endpoint,
      FSS_S3_BUCKET: settings.bucket,
      FSS_S3_ACCESS_KEY_ID: settings.accessKeyId,
      FSS_S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
      FSS_S3_PREFIX: settings.prefix,
    };
    const fsck = async (args: string[]) => {
      let out = '';
      const sink = { write: (text: string) => ((out += text), true) } as unknown as NodeJS.WriteStream;
      const code = await main(['fsck', ...args], env, { stdout: sink, stderr: sink, stdin: process.stdin });
      return { code, out };
    };
    expect(await fsck([])).toEqual({ code: 0, out: 'fsck: no problems\n' });

    const orphan = store.newKey(sha(Buffer.from('nobody knows me')));
    await client.send(new PutObjectCommand({ Bucket: settings.bucket, Key: `${store.contentPrefix}${orphan}`, Body: 'nobody knows me' }));
    const found = await fsck([]);
    expect(found.code).toBe(1);
    expect(found.out).toContain(`orphan blob ${orphan}`);
    expect((await fsck(['--repair'])).out).toContain('(repaired)');
    expect(await store.stat(orphan)).toBeNull();
    expect(await fsck([])).toEqual({ code: 0, out: 'fsck: no problems\n' });
  });
});
