import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { canonicalString, hmacSha256Hex, SigningKey, signedNames, signRequest, verifySign } from '../../src/operations/accounts/signing';

const key = 'key-123';
const signingKey = new SigningKey(key);

const fileSearch = { uid: '1001', token: 'tok-abc', order: 'name', desc: '0', keyword: '报告 & 总结' };
const fileShare = {
  uid: '1001',
  token: 'tok-abc',
  fids: '7,8',
  downpwd: 'ab12',
  downValue: '5',
  description: "it's (ok)!",
};

describe('sign (DECISIONS.md §5)', () => {
  test('FileSearch test vector: canonical string and sign', () => {
    expect(canonicalString('FileSearch', fileSearch)).toBe(
      'FileSearch\ndesc=0&keyword=%E6%8A%A5%E5%91%8A%20%26%20%E6%80%BB%E7%BB%93&order=name&token=tok-abc&uid=1001',
    );
    expect(signRequest(key, 'FileSearch', fileSearch)).toBe('1ab16a4861ea7c3aa7041068946e973ea7ea4d174dbb1a6503dfcd5c9783a9ef');
  });

  test('FileShare test vector: names sorted by character code, downValue before downpwd', () => {
    expect(canonicalString('FileShare', fileShare)).toBe(
      "FileShare\ndescription=it's%20(ok)!&downValue=5&downpwd=ab12&fids=7%2C8&token=tok-abc&uid=1001",
    );
    expect(signRequest(key, 'FileShare', fileShare)).toBe('a72065332e92e82e0aaf7c644c2cce7611c255438534c4b801babf07ccd6fbec');
  });

  test('the sign parameter itself is not signed', () => {
    expect(canonicalString('FileShare', { ...fileShare, sign: 'whatever' })).toBe(canonicalString('FileShare', fileShare));
  });

  test('an absent parameter is signed as an empty value', () => {
    expect(canonicalString('GetFiles', { uid: '1001', token: 't', dir: '', order: 'name', desc: '1' })).toBe(
      'GetFiles\ndesc=1&dir=&order=name&token=t&uid=1001',
    );
  });

  test('verifySign accepts the right sign', () => {
    expect(verifySign(signingKey, 'FileShare', { ...fileShare, sign: 'x' }, 'a72065332e92e82e0aaf7c644c2cce7611c255438534c4b801babf07ccd6fbec')).toBe(true);
  });

  test('verifySign refuses a missing, malformed or wrong sign', () => {
    const sign = signRequest(key, 'FileSearch', fileSearch);
    expect(verifySign(signingKey, 'FileSearch', fileSearch, null)).toBe(false);
    expect(verifySign(signingKey, 'FileSearch', fileSearch, '')).toBe(false);
    expect(verifySign(signingKey, 'FileSearch', fileSearch, 'zz' + sign.slice(2))).toBe(false);
    expect(verifySign(new SigningKey('other-key'), 'FileSearch', fileSearch, sign)).toBe(false);
  });

  test('a sign does not carry over to an altered parameter or another operation', () => {
    const sign = signRequest(key, 'FileSearch', fileSearch);
    expect(verifySign(signingKey, 'FileSearch', { ...fileSearch, keyword: 'other' }, sign)).toBe(false);
    expect(verifySign(signingKey, 'GetNewUploadFiles', fileSearch, sign)).toBe(false);
  });

  test('the sign is checked as the text that was sent: "01" is not "1"', () => {
    const sign = signRequest(key, 'FileSearch', fileSearch);
    expect(verifySign(signingKey, 'FileSearch', { ...fileSearch, uid: '01001' }, sign)).toBe(false);
  });

  test('the HMAC is the one of node:crypto for keys shorter, as long as and longer than a block, in any script', () => {
    for (let length = 0; length <= 150; length++) {
      const signingKey = 'k9é'.repeat(length).slice(0, length);
      const message = `GetFiles\nkeyword=${encodeURIComponent('报告'.repeat(length))}&uid=${length}`;
      expect(hmacSha256Hex(signingKey, message)).toBe(createHmac('sha256', Buffer.from(signingKey, 'utf8')).update(message, 'utf8').digest('hex'));
      // One key, many messages: the pads made once sign each as a fresh key would.
      expect(new SigningKey(signingKey).hmac(message).toString('hex')).toBe(hmacSha256Hex(signingKey, message));
    }
  });

  test('the HMAC is right for messages longer than its scratch buffer, and for short ones after them', () => {
    const key = new SigningKey('k'.repeat(40));
    for (const length of [5000, 10, 100_000, 4030, 4031, 4032, 4033, 3]) {
      const message = `FileAdd\ncontent=${'A'.repeat(length)}`;
      expect(key.hmac(message).toString('hex')).toBe(createHmac('sha256', 'k'.repeat(40)).update(message, 'utf8').digest('hex'));
    }
  });

  test('the names sorted once per operation give the same canonical string and the same verdicts', () => {
    const names = signedNames(['uid', 'token', 'keyword', 'order', 'desc', 'sign']);
    expect(names).toEqual(['desc', 'keyword', 'order', 'token', 'uid']);
    const params = { uid: '1001', token: 'tok', keyword: 'a b&c', order: 'name', desc: '0', sign: 'ignored' };
    expect(canonicalString('FileSearch', params, names)).toBe(canonicalString('FileSearch', params));
    const sign = signRequest(key, 'FileSearch', params);
    expect(verifySign(signingKey, 'FileSearch', params, sign, names)).toBe(true);
    expect(verifySign(signingKey, 'FileSearch', { ...params, keyword: 'a b&d' }, sign, names)).toBe(false);
  });
});
