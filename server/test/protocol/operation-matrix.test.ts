/**
 * Every operation of the catalog, in each of the four forms: the parameters arrive with their
 * types and exact values, and the result is embedded as ASMX embeds it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type OperationSpec, type WireType } from '../../src/catalog/operations';
import * as refuse from '../../src/operations/errors';
import { notImplemented, type OpError } from '../../src/operations/errors';
import { startProtocolServer, type ProtocolServer } from '../helpers/protocol-server';
import { callInForm, FORMS, resultXml, type Value } from '../helpers/requests';

let server: ProtocolServer;
/** The refusal the stand-in answers with instead of 501, when a test sets one. */
let refusal: OpError | undefined;
beforeAll(async () => {
  server = await startProtocolServer((call) =>
    call.op.result === 'string'
      ? { kind: 'result', result: { kind: 'string', value: 'ERROR <501> & "not yet"' } }
      : { kind: 'refusal', refusal: refusal ?? notImplemented(call.op.name) },
  );
});
afterAll(() => server.close());

// Values chosen to break careless binding: a long beyond 2^53, a negative int, text needing escapes.
const SAMPLES: Record<WireType, (index: number) => Value> = {
  long: (i) => 9007199254740993n + BigInt(i),
  int: (i) => -42 - i,
  string: (i) => `季度 & <x> "q" 'a' ${i} é+%`,
  base64Binary: () => Uint8Array.from([0, 255, 137, 80]),
};

function sampleValues(op: OperationSpec): Record<string, Value> {
  return Object.fromEntries(op.params.map((p, i) => [p.name, SAMPLES[p.type](i)]));
}

function asSent(value: Value): unknown {
  return value instanceof Uint8Array ? Buffer.from(value) : value;
}

describe.each(FORMS)('every operation over %s', (form) => {
  for (const op of operations) {
    it(`${op.service}.${op.name}: parameters arrive typed and exact; the result is embedded`, async () => {
      server.calls.length = 0;
      const values = sampleValues(op);
      const answer = await callInForm(server.url, form, op, values);
      expect(answer.status, answer.body).toBe(200);
      expect(server.calls).toHaveLength(1);
      const call = server.calls[0];
      expect(call.op).toBe(op);
      for (const param of op.params) {
        expect(call.values[param.name], param.name).toEqual(asSent(values[param.name]));
      }
      const soap = form === 'soap11' || form === 'soap12';
      expect(answer.contentType).toBe(form === 'soap12' ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8');
      if (op.result === 'string') {
        const text = 'ERROR &lt;501&gt; &amp; "not yet"';
        expect(answer.body).toContain(soap ? `<${op.name}Result>${text}</${op.name}Result>` : `<string xmlns="http://tempuri.org/">${text}</string>`);
      } else if (soap) {
        expect(resultXml(answer, op)).toBe(`<result code="501" msg="${op.name} is not implemented yet" reason="not-implemented" xmlns="" />`);
        expect(answer.body).toContain(`<${op.name}Response xmlns="http://tempuri.org/"><${op.name}Result>`);
      } else {
        expect(answer.body).toBe(`<?xml version="1.0" encoding="utf-8"?>\n<result code="501" msg="${op.name} is not implemented yet" reason="not-implemented" />`);
      }
    });
  }
});

/** A refusal of each code, as an operation throws it, and the result element every form must carry. */
const REFUSALS: readonly [OpError, string][] = [
  [refuse.invalidArgument('name-invalid', 'bad <name>'), '<result code="400" msg="bad &lt;name&gt;" reason="name-invalid"'],
  [refuse.unauthorized(), '<result code="401" msg="token missing, unknown or expired" reason="token-expired"'],
  [refuse.forbidden('sign-wrong', 'sign missing or wrong'), '<result code="403" msg="sign missing or wrong" reason="sign-wrong"'],
  [refuse.notFound('folder-not-found', 'folder not found'), '<result code="404" msg="folder not found" reason="folder-not-found"'],
  [refuse.conflict('name-taken', 'taken'), '<result code="409" msg="taken" reason="name-taken"'],
  [refuse.tooLarge('quota-exceeded', 'full'), '<result code="413" msg="full" reason="quota-exceeded"'],
  [refuse.lockedRefusal({ type: 'folder', id: 3, tip: 'hint' }), '<result code="423" msg="the item is in an encrypted folder: unlock the folder first" reason="encrypted-locked" id="3" tip="hint" type="folder"'],
  [refuse.tooManyAttempts('share-attempts', 'wait', 60), '<result code="429" msg="wait" reason="share-attempts" retryAfter="60"'],
  [refuse.unavailable('service-unavailable', 'down'), '<result code="503" msg="down" reason="service-unavailable"'],
];

describe.each(FORMS)('a refusal of each code over %s', (form) => {
  const op = operations.find((o) => o.name === 'FolderAdd')!;
  it.each(REFUSALS.map(([error, element]) => [error.code, error, element] as const))('%i carries its reason after code and msg, then its details', async (_code, error, element) => {
    refusal = error;
    try {
      const answer = await callInForm(server.url, form, op, sampleValues(op));
      const soap = form === 'soap11' || form === 'soap12';
      expect(resultXml(answer, op)).toBe(`${element}${soap ? ' xmlns=""' : ''} />`);
    } finally {
      refusal = undefined;
    }
  });
});
