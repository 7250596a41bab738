/**
 * The discovery document of a service (GET /X.asmx?disco), as ASMX writes it
 * (asmx-captures/01-docs/*-disco.res): where the WSDL is, and the two SOAP bindings.
 */
import type { ServiceName } from '../catalog/operations';
import type { DocOptions } from './wsdl';
import { StringSink, XmlWriter } from './xml-writer';

const DISCO = 'http://schemas.xmlsoap.org/disco/';

export function renderDisco(service: ServiceName, opts: DocOptions): string {
  const sink = new StringSink();
  const w = new XmlWriter(sink, { indent: true, emptyNamespaceOnTop: false });
  w.raw('<?xml version="1.0" encoding="utf-8"?>\n');
  w.start('discovery', [
    ['xmlns:xsd', 'http://www.w3.org/2001/XMLSchema'],
    ['xmlns:xsi', 'http://www.w3.org/2001/XMLSchema-instance'],
    ['xmlns', DISCO],
  ]);
  w.empty('contractRef', [['ref', `${opts.location}?wsdl`], ['docRef', opts.location], ['xmlns', `${DISCO}scl/`]]);
  // .NET numbers the prefix it declares for each binding's namespace: q1, q2.
  for (const [index, suffix] of ['Soap', 'Soap12'].entries()) {
    const prefix = `q${index + 1}`;
    w.empty('soap', [
      ['address', opts.location],
      [`xmlns:${prefix}`, opts.namespace],
      ['binding', `${prefix}:${service}${suffix}`],
      ['xmlns', `${DISCO}soap/`],
    ]);
  }
  w.end();
  void w.flush();
  return sink.toString();
}
