import { describe, expect, it } from 'vitest';
import { addressProblem as serviceAddressProblem, parseRecipients } from '../../server/src/operations/sharing/email-shares';
import {
  addRecipients,
  addressProblem,
  firstInvalidAddress,
  hasSeparator,
  MAX_EMAIL_RECIPIENTS,
  recipientsParam,
  splitAddressList,
  type AddressProblem,
} from './email-addresses';

/** The service words each problem; the dialog has a code per wording. */
const SERVICE_WORDING: Readonly<Record<AddressProblem, string>> = {
  control: '', // the service checks control characters over the whole `to` (parseRecipients)
  'too-long': 'is longer than 254 characters',
  'no-at': 'has no @',
  'no-local': 'has nothing before the @',
  'no-domain': 'has no domain after the @',
  'local-too-long': 'has more than 64 characters before the @',
  'local-characters': 'has characters before the @ that an address cannot have',
  domain: 'has an invalid domain',
  'domain-no-dot': 'has a domain without a dot',
};

const ADDRESSES = [
  'alice@example.com',
  'Alice.Smith+tag@Example.CO.uk',
  "o'brien!#$%&*/=?^_`{|}~-@mail.example.org",
  'a@b.co',
  'x@sub-domain.example-1.com',
  'user@例子.测试',
  'user@bücher.example',
  'bob@localhost',
  'bob@',
  '@example.com',
  'bob',
  'bob@@example.com',
  'bob@exa mple.com',
  'bob smith@example.com',
  '.bob@example.com',
  'bob.@example.com',
  'bo..b@example.com',
  '"bob"@example.com',
  'bob@-example.com',
  'bob@example-.com',
  'bob@example..com',
  'bob@example.com.',
  'bob@example.123',
  'bob@192.0.2.1',
  'bob@[192.0.2.1]',
  'bob@exa_mple.com',
  `${'a'.repeat(64)}@example.com`,
  `${'a'.repeat(65)}@example.com`,
  `a@${'b'.repeat(63)}.com`,
  `a@${'b'.repeat(64)}.com`,
  `a@${Array.from({ length: 60 }, () => 'abcd').join('.')}.com`,
  'bob@例子/x.com',
  'bob@例子.com:80',
  'bob@例子.123',
  'bob@例子.com/x',
  'hans@bücher.example?x',
  'hans@bü%63her.example',
  'bob@例子_x.com',
  'bob@例子。com',
  'bob@ＥＸＡＭＰＬＥ例.com',
  'ünicode@example.com',
  'Bob <bob@example.com>',
];

describe('addressProblem', () => {
  it('accepts and refuses exactly what the service does, for the same reason', () => {
    for (const address of ADDRESSES) {
      const problem = addressProblem(address);
      const serviceWording = serviceAddressProblem(address);
      expect(problem === null ? null : SERVICE_WORDING[problem], address).toBe(serviceWording);
    }
  });

  it('names the reason of each refusal', () => {
    expect(addressProblem('alice@example.com')).toBeNull();
    expect(addressProblem('user@例子.测试')).toBeNull();
    expect(addressProblem('bob@localhost')).toBe('domain-no-dot');
    expect(addressProblem('bob')).toBe('no-at');
    expect(addressProblem('@example.com')).toBe('no-local');
    expect(addressProblem('bob@')).toBe('no-domain');
    expect(addressProblem('bo..b@example.com')).toBe('local-characters');
    expect(addressProblem('bob@example.123')).toBe('domain');
    expect(addressProblem('bob@例子/x.com')).toBe('domain');
    expect(addressProblem(`${'a'.repeat(65)}@example.com`)).toBe('local-too-long');
    expect(addressProblem(`a@${'b'.repeat(250)}.com`)).toBe('too-long');
    expect(addressProblem('bob\u0007@example.com')).toBe('control');
  });

  it('refuses control characters, as the service does anywhere in `to`', () => {
    expect(() => parseRecipients('bob\u0007@example.com', 20)).toThrow(/control character/);
    expect(addressProblem('bob\u0007@example.com')).toBe('control');
    expect(addressProblem('bob@exam\u2028ple.com')).toBe('control');
  });
});

describe('splitAddressList', () => {
  it('separates on commas, semicolons, spaces, tabs and line breaks, skipping empty entries', () => {
    expect(splitAddressList('a@x.com, b@y.com;c@z.com\n d@w.com\r\ne@v.com\tf@u.com ;; ,')).toEqual([
      'a@x.com',
      'b@y.com',
      'c@z.com',
      'd@w.com',
      'e@v.com',
      'f@u.com',
    ]);
    expect(splitAddressList('  ')).toEqual([]);
  });

  it('keeps the address of a pasted "Name <address>", even when the name is quoted and holds a comma', () => {
    expect(splitAddressList('Bob Smith <bob@example.com>, "Smith, Alice" <alice@example.com>; <carol@example.com>')).toEqual([
      'bob@example.com',
      'alice@example.com',
      'carol@example.com',
    ]);
  });

  it('drops a mailto: prefix', () => {
    expect(splitAddressList('mailto:bob@example.com MAILTO:ann@example.com')).toEqual(['bob@example.com', 'ann@example.com']);
  });

  it('what the service receives is the same list: each address, joined by commas', () => {
    const { recipients } = addRecipients([], 'Bob <bob@example.com>\nann@example.com carol@example.com');
    expect(parseRecipients(recipientsParam(recipients), MAX_EMAIL_RECIPIENTS)).toEqual(['bob@example.com', 'ann@example.com', 'carol@example.com']);
  });
});

describe('addRecipients', () => {
  it('adds valid addresses and keeps refused ones as the text to correct, naming each problem', () => {
    const update = addRecipients(['ann@example.com'], 'bob@example.com, carol@localhost; dave');
    expect(update.recipients).toEqual(['ann@example.com', 'bob@example.com']);
    expect(update.added).toEqual(['bob@example.com']);
    expect(update.invalid).toEqual([
      { address: 'carol@localhost', problem: 'domain-no-dot' },
      { address: 'dave', problem: 'no-at' },
    ]);
    expect(update.draft).toBe('carol@localhost, dave');
  });

  it('merges duplicates case-insensitively, keeping the first spelling', () => {
    const update = addRecipients(['Ann@Example.com'], 'ann@example.com bob@example.com BOB@EXAMPLE.COM');
    expect(update.recipients).toEqual(['Ann@Example.com', 'bob@example.com']);
    expect(update.duplicates).toEqual(['ann@example.com', 'BOB@EXAMPLE.COM']);
    expect(update.draft).toBe('');
  });

  it('stops at the limit and keeps the rest in the field', () => {
    const many = Array.from({ length: 23 }, (_, index) => `user${index}@example.com`);
    const update = addRecipients([], many.join('\n'));
    expect(update.recipients).toHaveLength(MAX_EMAIL_RECIPIENTS);
    expect(update.overflow).toEqual(many.slice(MAX_EMAIL_RECIPIENTS));
    expect(update.draft).toBe(many.slice(MAX_EMAIL_RECIPIENTS).join(', '));
    // A duplicate is merged even when the list is full: it is not refused as one too many.
    expect(addRecipients(update.recipients, 'USER0@example.com').duplicates).toEqual(['USER0@example.com']);
    expect(addRecipients(['a@example.com'], 'b@example.com c@example.com', 2).overflow).toEqual(['c@example.com']);
  });

  it('an empty text changes nothing', () => {
    expect(addRecipients(['a@example.com'], ' , ')).toMatchObject({ recipients: ['a@example.com'], added: [], draft: '' });
  });
});

describe('checking while typing', () => {
  it('firstInvalidAddress finds the first refused address of the text, or none', () => {
    expect(firstInvalidAddress('bob@example.com, carol@localhost, dave')).toEqual({ address: 'carol@localhost', problem: 'domain-no-dot' });
    expect(firstInvalidAddress('carol@localhost.com')).toBeNull();
    expect(firstInvalidAddress('')).toBeNull();
  });

  it('hasSeparator tells a list from one address', () => {
    expect(hasSeparator('a@x.com')).toBe(false);
    expect(hasSeparator('a@x.com,')).toBe(true);
    expect(hasSeparator('a@x.com b')).toBe(true);
    expect(hasSeparator('a@x.com\n')).toBe(true);
  });
});
