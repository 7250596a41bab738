/** The HTTP GET and POST forms: /X.asmx/Op with a query or form body (ASMX-WIRE.md "Routing", "Parameters"). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { operationsOf, type OperationSpec, type ServiceName } from '../../catalog/operations';
import { bindFormParameters, FormBindingError, refusedWhileBinding, type BoundCall } from './binding';
import { messages } from './faults';
import { answerPlainText, BodyTooLargeError, OPERATION_CACHE, parseContentType, readBody, type RequestFacts } from '../http-common';
import type { ProtocolEnv } from '../pipeline';
import { answerXmlDocument } from './rendered-answers';
import { resultString, writeResultElement } from './results';
import { decodeUtf8, EncodingError, parseFormEncoded, type FormValues } from './wire-values';
import { escapeAttribute, escapeText } from './xml-writer';

const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n';

/** The operation a path names; method names are case-sensitive, with a specific error for the wrong case. */
export function operationForPath(service: ServiceName, name: string): OperationSpec | string {
  const ops = operationsOf(service);
  const exact = ops.find((op) => op.name === name);
  if (exact) return exact;
  const other = ops.find((op) => op.name.toLowerCase() === name.toLowerCase());
  return other ? messages.methodCase(name, other.name) : messages.methodNotValid(name);
}

/** Query strings arrive as Latin-1 text from Node's parser; raw non-ASCII octets are re-read as UTF-8. */
function queryText(req: IncomingMessage): string {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  if (q < 0) return '';
  const query = url.slice(q + 1);
  return /[^\x00-\x7f]/.test(query) ? decodeUtf8(Buffer.from(query, 'latin1')) : query;
}

async function formValues(req: IncomingMessage, limit: number): Promise<FormValues | string> {
  if (req.method === 'GET') return parseFormEncoded(queryText(req));
  const contentType = parseContentType(req.headers['content-type']);
  if (contentType?.mediaType !== 'application/x-www-form-urlencoded') {
    return messages.requestFormatInvalid(contentType?.raw ?? '');
  }
  const body = await readBody(req, limit);
  return parseFormEncoded(decodeUtf8(body));
}

export async function answerHttpForm(
  req: IncomingMessage,
  res: ServerResponse,
  op: OperationSpec,
  facts: RequestFacts,
  env: ProtocolEnv,
): Promise<void> {
  let call: BoundCall;
  try {
    const form = await formValues(req, op.maxBodyBytes ?? env.config.limits.maxBodyBytes);
    if (typeof form === 'string') return answerPlainText(res, form);
    call = bindFormParameters(op, form);
  } catch (error) {
    if (error instanceof FormBindingError) return answerPlainText(res, error.message);
    if (error instanceof EncodingError) return answerPlainText(res, messages.invalidUtf8);
    if (error instanceof BodyTooLargeError) return answerPlainText(res, messages.requestTooLarge, undefined, 500, true);
    throw error;
  }

  const outcome = refusedWhileBinding(call) ?? (await env.invoke(call, facts));
  if (outcome.kind === 'incident') return answerPlainText(res, messages.internalError(outcome.incident), OPERATION_CACHE);
  const { namespace } = env.config;
  await answerXmlDocument(
    res,
    env.caches,
    outcome,
    `form ${op.name} ${namespace}`,
    { status: 200, contentType: 'text/xml; charset=utf-8', cacheControl: OPERATION_CACHE },
    { indent: true, emptyNamespaceOnTop: false },
    async (writer) => {
      writer.raw(XML_DECLARATION);
      if (op.result === 'string') {
        writer.raw(`<string xmlns="${escapeAttribute(namespace)}">${escapeText(resultString(outcome))}</string>`);
      } else {
        await writeResultElement(writer, op, outcome);
      }
    },
  );
}
