/** The discovery document (GET /X.asmx?disco) as ASMX writes it (asmx-captures/01-docs/*-disco.res). */
import type { ServiceName } from '../../catalog/operations';
import type { DocOptions } from './wsdl';
import { createDocument, serializeDocument } from './xml-documents';

const DISCO = 'http://schemas.xmlsoap.org/disco/';

export function renderDisco(service: ServiceName, opts: DocOptions): string {
  const discovery = createDocument('discovery', {
    'xmlns:xsd': 'http://www.w3.org/2001/XMLSchema',
    'xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance',
    xmlns: DISCO,
  });
  discovery.ele('contractRef', { ref: `${opts.location}?wsdl`, docRef: opts.location, xmlns: `${DISCO}scl/` });
  // .NET numbers the prefix it declares for each binding's namespace: q1, q2.
  for (const [index, suffix] of ['Soap', 'Soap12'].entries()) {
    const prefix = `q${index + 1}`;
    discovery.ele('soap', {
      address: opts.location,
      [`xmlns:${prefix}`]: opts.namespace,
      binding: `${prefix}:${service}${suffix}`,
      xmlns: `${DISCO}soap/`,
    });
  }
  return serializeDocument(discovery);
}
