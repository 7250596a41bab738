/**
 * SOAP requests read once per text (protocol/repeated-requests.ts): a request that repeats an
 * earlier one exactly is bound to the same call without being read again, and still goes through
 * every check after reading; anything that could read differently is read afresh.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation } from '../../src/catalog/operations';
import type { BoundCall } from '../../src/protocol/binding';
import { MAX_ENTRIES, MAX_TEXT, RepeatedRequests, type RequestSetting, type SoapReading } from '../../src/protocol/repeated-requests';
import { hashSecret } from '../../src/operations/passwords';
import { signRequest } from '../../src/operations/signing';
import { addAccount, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { resultXml, send, soapEnvelope } from '../helpers/requests';

const GetFiles = findOperation('UserService', 'GetFiles')!;
const setting: RequestSetting = { service: 'UserService', version: '1.1', action: 'http://tempuri.org/GetFiles', bodyBytes: 500 };

function reading(values: BoundCall['values'] = { uid: 1n, token: 't', dir: '0', order: 'name', desc: '0', sign: 's' }): SoapReading {
  return { op: GetFiles, answerVersion: '1.1', call: { op: GetFiles, values, text: { uid: '1', token: 't', dir: '0', order: 'name', desc: '0', sign: 's' } } };
}

describe('RepeatedRequests', () => {
  it('gives back the reading of the same text in the same setting', () => {
    const kept = new RepeatedRequests();
    kept.put('<envelope/>', setting, reading());
    expect(kept.get('<envelope/>', { ...setting })?.call.values.dir).toBe('0');
  });

  it('reads again when the service, version, action or body size differ', () => {
    const kept = new RepeatedRequests();
    kept.put('<envelope/>', setting, reading());
    expect(kept.get('<envelope/>', { ...setting, service: 'FileService' })).toBeUndefined();
    expect(kept.get('<envelope/>', { ...setting, version: '1.2' })).toBeUndefined();
    expect(kept.get('<envelope/>', { ...setting, action: undefined })).toBeUndefined();
    expect(kept.get('<envelope/>', { ...setting, bodyBytes: 1000 })).toBeUndefined();
    expect(kept.get('<envelope />', setting)).toBeUndefined();
  });

  it('keeps the call frozen, so that no operation can change what the next request gets', () => {
    const kept = new RepeatedRequests();
    kept.put('<envelope/>', setting, reading());
    const call = kept.get('<envelope/>', setting)!.call;
    expect(Object.isFrozen(call) && Object.isFrozen(call.values) && Object.isFrozen(call.text)).toBe(true);
  });

  it('does not keep a text over its bound, or a call that carries bytes', () => {
    const kept = new RepeatedRequests();
    kept.put('x'.repeat(MAX_TEXT + 1), setting, reading());
    kept.put('<with-bytes/>', setting, reading({ uid: 1n, data: Buffer.from('abc') }));
    expect(kept.size).toBe(0);
  });

  it('holds at most its bound, the least recently used going first', () => {
    const kept = new RepeatedRequests();
    for (let i = 0; i < MAX_ENTRIES; i++) kept.put(`<e n="${i}"/>`, setting, reading());
    expect(kept.get('<e n="0"/>', setting)).toBeDefined();
    kept.put('<one-more/>', setting, reading());
    expect(kept.size).toBe(MAX_ENTRIES);
    expect(kept.get('<e n="0"/>', setting)).toBeDefined();
    expect(kept.get('<e n="1"/>', setting)).toBeUndefined();
  });
});

describe('a repeated SOAP request, over the wire', () => {
  let app: TestApp;
  let session: Session;

  beforeAll(async () => {
    app = await startTestApp();
    await addAccount(app, 'alice', 'alice-password-1');
    session = await logIn(app, 'soap11', 'alice', 'alice-password-1');
  });
  afterAll(() => app.close());

  /** One signed GetFiles envelope of the root, sent as it is as often as asked. */
  function getFilesEnvelope(version: '1.1' | '1.2' = '1.1'): string {
    const text = { uid: String(session.uid), token: session.token, dir: '0', order: 'name', desc: '0' };
    const sign = signRequest(session.key, 'GetFiles', text);
    const params = Object.entries({ ...text, sign })
      .map(([name, value]) => `<${name}>${value}</${name}>`)
      .join('');
    return soapEnvelope(version, `<GetFiles xmlns="http://tempuri.org/">${params}</GetFiles>`);
  }

  const soap11 = (envelope: string, action = 'http://tempuri.org/GetFiles') =>
    send(app.url, 'POST', '/UserService.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${action}"` }, envelope);

  it('is answered as its first sending was', async () => {
    const envelope = getFilesEnvelope();
    const first = await soap11(envelope);
    const again = await soap11(envelope);
    expect(element(resultXml(first, GetFiles), 'result')?.attrs.code).toBe('0');
    expect(again.status).toBe(first.status);
    expect(again.body).toBe(first.body);
  });

  it('is refused once its token is gone: the checks run on every request', async () => {
    const other = await logIn(app, 'soap11', 'alice', 'alice-password-1');
    const previous = session;
    session = other;
    const envelope = getFilesEnvelope();
    expect((await soap11(envelope)).status).toBe(200);
    await app.app.services.db.deleteFrom('tokens').where('token_hash', '=', hashSecret(other.token)).execute();
    const refused = await soap11(envelope);
    expect(element(resultXml(refused, GetFiles), 'result')?.attrs.code).toBe('401');
    session = previous;
  });

  it('with another SOAPAction is read again and refused for the mismatch', async () => {
    const envelope = getFilesEnvelope();
    expect((await soap11(envelope)).status).toBe(200);
    const mismatched = await soap11(envelope, 'http://tempuri.org/GetFilesWhitPath');
    expect(mismatched.status).toBe(500);
    expect(mismatched.body).toMatch(/GetFilesWhitPath/);
  });

  it('of a SOAP 1.1 envelope sent as SOAP 1.2 is refused every time', async () => {
    const envelope = getFilesEnvelope();
    expect((await soap11(envelope)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const refused = await send(app.url, 'POST', '/UserService.asmx', { 'Content-Type': 'application/soap+xml; charset=utf-8' }, envelope);
      expect(refused.status).toBe(415);
    }
  });

  it('that was refused is refused again, as the first time', async () => {
    const broken = getFilesEnvelope().replace(/<uid>\d+<\/uid>/, '<uid>one</uid>');
    const first = await soap11(broken);
    const again = await soap11(broken);
    expect(first.status).toBe(500);
    expect(first.body).toMatch(/soap:Fault/);
    expect(again.body).toBe(first.body);
  });

  it('in SOAP 1.2 is answered in SOAP 1.2 each time', async () => {
    const envelope = getFilesEnvelope('1.2');
    for (let i = 0; i < 2; i++) {
      const answer = await send(app.url, 'POST', '/UserService.asmx', { 'Content-Type': 'application/soap+xml; charset=utf-8' }, envelope);
      expect(answer.status).toBe(200);
      expect(answer.contentType).toMatch(/^application\/soap\+xml/);
      expect(answer.body).toContain('http://www.w3.org/2003/05/soap-envelope');
      expect(element(resultXml(answer, GetFiles), 'result')?.attrs.code).toBe('0');
    }
  });
});
