import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import soap from 'soap';
import { describe, expect, it } from 'vitest';
import { operationsOf, type ServiceName } from '../../src/catalog/operations';
import { renderDisco } from '../../src/protocol/asmx/disco';
import { abstractTypesNamespace, renderWsdl, type DocOptions } from '../../src/protocol/asmx/wsdl';
import { loadResponse } from '../helpers/captures';

const CAPTURED_SERVICES = ['OAuthService', 'FileService', 'UserService'] as const;
const ALL_SERVICES = [...CAPTURED_SERVICES, 'ShareService'] as const;

/** The options under which the captures were taken. */
const captureOptions = (service: ServiceName): DocOptions => ({
  namespace: 'http://tempuri.org/',
  location: `http://127.0.0.1:8090/${service}.asmx`,
});

const captureBody = (name: string) => loadResponse(`01-docs/${name}`).body.toString('utf8');

// ---- a WSDL as a map of its elements ------------------------------------------------------------

type OrderedNode = Record<string, unknown> & { ':@'?: Record<string, string> };

/**
 * Every element of the document, keyed by its path, each step named by tag and by its `name` (a
 * schema by its targetNamespace), in document order. Two documents have the same element when they
 * have the same key.
 */
function elementsOf(xml: string): Map<string, Record<string, string>> {
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', preserveOrder: true });
  const elements = new Map<string, Record<string, string>>();
  const walk = (nodes: OrderedNode[], parent: string) => {
    const seen = new Map<string, number>();
    for (const node of nodes) {
      const tag = Object.keys(node).find((key) => key !== ':@');
      if (!tag || tag === '#text' || tag.startsWith('?')) continue;
      const attributes = node[':@'] ?? {};
      const id = attributes.name ?? (tag === 's:schema' ? attributes.targetNamespace : undefined);
      const step = id === undefined ? tag : `${tag}[${id}]`;
      const count = seen.get(step) ?? 0;
      seen.set(step, count + 1);
      const key = `${parent}/${count === 0 ? step : `${step}#${count}`}`;
      elements.set(key, attributes);
      walk(node[tag] as OrderedNode[], key);
    }
  };
  walk(parser.parse(xml) as OrderedNode[], '');
  return elements;
}

/** The names of the wsdl:operation children of one element, e.g. a binding, in order. */
function operationNamesUnder(elements: Map<string, Record<string, string>>, parentKey: string): string[] {
  const names: string[] = [];
  for (const [key, attributes] of elements) {
    if (key.startsWith(`${parentKey}/wsdl:operation[`) && !key.slice(parentKey.length + 1).includes('/')) names.push(attributes.name);
  }
  return names;
}

/**
 * ASMX's StringArray restricts soapenc:Array, and naming that namespace makes zeep download its
 * schema from the internet. Ours is the same sequence of String elements without that base (see
 * wsdl.ts); these parts of the capture are therefore not expected in ours.
 */
function isDeliberatelyDifferent(key: string): boolean {
  const abstractTypes = '/wsdl:definitions/wsdl:types/s:schema[http://tempuri.org/AbstractTypes]';
  return key === `${abstractTypes}/s:import` || key.startsWith(`${abstractTypes}/s:complexType[StringArray]/s:complexContent`);
}

describe.each(CAPTURED_SERVICES)('the WSDL of %s', (service) => {
  const ours = elementsOf(renderWsdl(service, captureOptions(service)));
  const capture = elementsOf(captureBody(`${service}-wsdl`));

  it('has every element of the ASMX capture, with the same attributes', () => {
    const missing: string[] = [];
    const different: Array<{ key: string; capture: Record<string, string>; ours: Record<string, string> }> = [];
    for (const [key, attributes] of capture) {
      if (isDeliberatelyDifferent(key)) continue;
      const mine = ours.get(key);
      if (mine === undefined) missing.push(key);
      else if (JSON.stringify(Object.entries(mine).sort()) !== JSON.stringify(Object.entries(attributes).sort())) {
        different.push({ key, capture: attributes, ours: mine });
      }
    }
    expect(missing).toEqual([]);
    expect(different).toEqual([]);
  });

  it("lists the catalog's operations, extensions included, in catalog order in every port type and binding", () => {
    const expected = operationsOf(service).map((op) => op.name);
    for (const form of ['Soap', 'HttpGet', 'HttpPost']) {
      expect(operationNamesUnder(ours, `/wsdl:definitions/wsdl:portType[${service}${form}]`), form).toEqual(expected);
    }
    for (const form of ['Soap', 'Soap12', 'HttpGet', 'HttpPost']) {
      expect(operationNamesUnder(ours, `/wsdl:definitions/wsdl:binding[${service}${form}]`), form).toEqual(expected);
    }
  });
});

describe('the WSDL documents', () => {
  it('offer the extension operations exactly like the documented ones', () => {
    const ours = elementsOf(renderWsdl('FileService', captureOptions('FileService')));
    const binding = '/wsdl:definitions/wsdl:binding';
    for (const op of operationsOf('FileService').filter((candidate) => candidate.extension)) {
      expect(ours.get(`${binding}[FileServiceSoap]/wsdl:operation[${op.name}]/soap:operation`)).toEqual({
        soapAction: `http://tempuri.org/${op.name}`,
        style: 'document',
      });
      expect(ours.get(`${binding}[FileServiceSoap12]/wsdl:operation[${op.name}]/soap12:operation`)?.soapAction).toBe(`http://tempuri.org/${op.name}`);
      expect(ours.get(`${binding}[FileServiceHttpGet]/wsdl:operation[${op.name}]/http:operation`)).toEqual({ location: `/${op.name}` });
      expect(ours.get(`${binding}[FileServiceHttpPost]/wsdl:operation[${op.name}]/http:operation`)).toEqual({ location: `/${op.name}` });
      expect(ours.has(`/wsdl:definitions/wsdl:message[${op.name}HttpPostIn]`)).toBe(true);
    }
  });

  it('mark extensions in the operation documentation that proxy generators copy', () => {
    const wsdl = renderWsdl('OAuthService', captureOptions('OAuthService'));
    expect(wsdl).toContain('<wsdl:documentation xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/">Revokes the token. (extension)</wsdl:documentation>');
    expect(wsdl).toContain('Returns a token and its signing key; &lt;token&gt;0&lt;/token&gt; on a wrong name or password.');
  });

  it('give the anonymous ShareService a WSDL of its own, with its address', () => {
    const options = { namespace: 'http://tempuri.org/', location: 'https://files.example.com/ShareService.asmx' };
    const ours = elementsOf(renderWsdl('ShareService', options));
    expect(operationNamesUnder(ours, '/wsdl:definitions/wsdl:binding[ShareServiceSoap12]')).toEqual(['ShareOpen', 'ShareList', 'ShareDownload', 'ShareThumbnailBase']);
    expect(ours.get('/wsdl:definitions/wsdl:service[ShareService]/wsdl:port[ShareServiceSoap]/soap:address')).toEqual({ location: options.location });
    expect(ours.get('/wsdl:definitions/wsdl:service[ShareService]/wsdl:port[ShareServiceHttpPost]/http:address')).toEqual({ location: options.location });
  });

  it('use a custom namespace everywhere: target namespace, tns, schema and SOAP actions', () => {
    const namespace = 'urn:example:files/';
    const wsdl = renderWsdl('FileService', { namespace, location: 'http://127.0.0.1:8080/FileService.asmx' });
    const ours = elementsOf(wsdl);
    const root = ours.get('/wsdl:definitions');
    expect(root?.targetNamespace).toBe(namespace);
    expect(root?.['xmlns:tns']).toBe(namespace);
    expect(root?.['xmlns:s1']).toBe('urn:example:files/AbstractTypes');
    expect(ours.has(`/wsdl:definitions/wsdl:types/s:schema[${namespace}]/s:element[FileAdd]`)).toBe(true);
    for (const op of operationsOf('FileService')) {
      expect(ours.get(`/wsdl:definitions/wsdl:binding[FileServiceSoap]/wsdl:operation[${op.name}]/soap:operation`)?.soapAction).toBe(`${namespace}${op.name}`);
    }
    expect(wsdl).not.toContain('tempuri');
  });

  it('put the HTTP array type beside the namespace as ASMX does, with or without a final slash', () => {
    expect(abstractTypesNamespace('http://tempuri.org/')).toBe('http://tempuri.org/AbstractTypes');
    expect(abstractTypesNamespace('urn:example:files')).toBe('urn:example:files/AbstractTypes');
  });

  it('escape a namespace that needs it, and stay well-formed', () => {
    const wsdl = renderWsdl('FileService', { namespace: 'urn:a<b&"c"/', location: 'http://127.0.0.1:8080/FileService.asmx' });
    expect(wsdl).toContain('targetNamespace="urn:a&lt;b&amp;&quot;c&quot;/"');
    expect(elementsOf(wsdl).get('/wsdl:definitions')?.targetNamespace).toBe('urn:a<b&"c"/');
  });

  it('type byte[] as base64Binary in SOAP and as a StringArray of String elements over HTTP, naming no SOAP-encoding type', () => {
    const wsdl = renderWsdl('FileService', captureOptions('FileService'));
    const ours = elementsOf(wsdl);
    const types = '/wsdl:definitions/wsdl:types';
    expect(ours.get(`${types}/s:schema[http://tempuri.org/]/s:element[ShareImageUpload]/s:complexType/s:sequence/s:element[byteFileStream]`)?.type).toBe('s:base64Binary');
    expect(ours.get('/wsdl:definitions/wsdl:message[ShareImageUploadHttpGetIn]/wsdl:part[byteFileStream]')?.type).toBe('s1:StringArray');
    expect(ours.get(`${types}/s:schema[http://tempuri.org/AbstractTypes]/s:complexType[StringArray]/s:sequence/s:element[String]`)).toEqual({
      minOccurs: '0',
      maxOccurs: 'unbounded',
      name: 'String',
      type: 's:string',
    });
    expect(wsdl).not.toMatch(/soapenc:|s:import|schemaLocation/);
  });
});

describe('the discovery documents', () => {
  it.each(CAPTURED_SERVICES)('of %s are byte for byte what ASMX sends', (service) => {
    expect(renderDisco(service, captureOptions(service))).toBe(captureBody(`${service}-disco`));
  });
});

// ---- real clients -------------------------------------------------------------------------------

describe('node soap', () => {
  it.each(ALL_SERVICES)('reads the WSDL of %s without fetching anything and sees every operation with its parameters', async (service) => {
    const fetched: string[] = [];
    const refuseEveryFetch = {
      request(url: string, _data: unknown, callback: (error: unknown) => void) {
        fetched.push(url);
        callback(new Error(`node soap tried to fetch ${url}`));
        return undefined as never;
      },
    };
    // A WSDL given as text is read as it is; any schema it pointed to would go through httpClient.
    const client = await soap.createClientAsync(renderWsdl(service, captureOptions(service)), { httpClient: refuseEveryFetch });
    const description = client.describe() as Record<string, Record<string, Record<string, { input: Record<string, unknown> }>>>;

    expect(fetched).toEqual([]);
    expect(Object.keys(description[service]).sort()).toEqual([`${service}Soap`, `${service}Soap12`]);
    for (const port of [`${service}Soap`, `${service}Soap12`]) {
      const operations = description[service][port];
      expect(Object.keys(operations), port).toEqual(operationsOf(service).map((op) => op.name));
      for (const op of operationsOf(service)) {
        expect(Object.keys(operations[op.name].input), `${port} ${op.name}`).toEqual(op.params.map((param) => param.name));
      }
    }
  });
});

/**
 * Loads the WSDL from `url` with zeep, through a transport that loads nothing but that URL and a
 * session that refuses any host but 127.0.0.1, and prints what it understood as JSON.
 */
const ZEEP_SCRIPT = String.raw`
import json, sys
from urllib.parse import urlparse
try:
    import requests, zeep
    from zeep.transports import Transport
except ImportError as error:
    print("zeep is not importable by " + sys.executable + ": " + str(error), file=sys.stderr)
    sys.exit(3)

wsdl_url = sys.argv[1]

class LoopbackOnly(requests.Session):
    def request(self, method, url, *args, **kwargs):
        if urlparse(url).hostname != "127.0.0.1":
            raise RuntimeError("zeep tried to reach the network: " + url)
        return super().request(method, url, *args, **kwargs)

class OnlyTheWsdl(Transport):
    def load(self, url):
        if url != wsdl_url:
            raise RuntimeError("zeep tried to load " + url + ": the WSDL is not self-sufficient")
        return super().load(url)

client = zeep.Client(wsdl_url, transport=OnlyTheWsdl(session=LoopbackOnly()))
ports = {}
for service in client.wsdl.services.values():
    for port in service.ports.values():
        operations = {}
        for name, operation in port.binding._operations.items():
            body = getattr(operation.input, "body", None)
            params = [element_name for element_name, _ in body.type.elements] if body is not None else None
            operations[name] = {"action": getattr(operation, "soapaction", None), "params": params}
        ports[port.name] = {"binding": type(port.binding).__name__, "operations": operations}
print(json.dumps(ports))
`;

const PYTHON = '/usr/bin/python3';

async function withServedDocument<T>(body: string, use: (url: string) => Promise<T>): Promise<T> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await use(`http://127.0.0.1:${port}/Service.asmx?WSDL`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Runs zeep asynchronously: the loopback server has to keep answering while Python asks. */
function runZeep(url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, ['-c', ZEEP_SCRIPT, url], { timeout: 20_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr: stderr || (error ? String(error) : '') });
    });
  });
}

interface ZeepPorts {
  [port: string]: { binding: string; operations: Record<string, { action: string | null; params: string[] | null }> };
}

describe('Python zeep', () => {
  it.each(ALL_SERVICES)('loads the WSDL of %s with no network and no other document, and sees both SOAP ports', async (service) => {
    const namespace = 'urn:example:files/';
    const wsdl = renderWsdl(service, { namespace, location: `http://127.0.0.1:8080/${service}.asmx` });
    const result = await withServedDocument(wsdl, runZeep);

    expect(
      result.code,
      `zeep failed under ${PYTHON} (CI installs it with: apt-get install -y python3-zeep):\n${result.stderr}`,
    ).toBe(0);
    const ports = JSON.parse(result.stdout) as ZeepPorts;
    expect(ports[`${service}Soap`].binding).toBe('Soap11Binding');
    expect(ports[`${service}Soap12`].binding).toBe('Soap12Binding');
    for (const port of [`${service}Soap`, `${service}Soap12`]) {
      for (const op of operationsOf(service)) {
        expect(ports[port].operations[op.name], `${port} ${op.name}`).toEqual({
          action: `${namespace}${op.name}`,
          params: op.params.map((param) => param.name),
        });
      }
      expect(Object.keys(ports[port].operations).sort()).toEqual(operationsOf(service).map((op) => op.name).sort());
    }
  });
});
