"""Drives the service with Python zeep, exactly as a zeep user would, and prints what it saw as JSON.

    /usr/bin/python3 zeep_client.py BASE_URL ACCOUNT PASSWORD soap11|soap12

Loads the three WSDLs from BASE_URL with zeep.Client, binds the SOAP 1.1 or SOAP 1.2 port, logs in,
signs calls per DECISIONS.md section 5 (computed here, in Python), and prints one JSON object on
stdout. Every HTTP request goes through a transport that refuses any host but 127.0.0.1, so a WSDL
that makes zeep download a schema fails loudly instead of silently reaching the internet.

Exit codes: 0 = ran (the JSON says what happened), 3 = zeep cannot be imported, 2 = bad usage.
Anything else (a zeep error while loading a WSDL, a refused download) ends with a traceback on stderr.
"""
import hashlib
import hmac
import json
import sys
from urllib.parse import quote, urlparse

try:
    import requests
    import zeep
    from lxml import etree
    from requests.adapters import HTTPAdapter
    from zeep.transports import Transport
except ImportError as error:  # pragma: no cover - depends on the machine
    print(
        f"cannot import zeep for {sys.executable}: {error}. Install it with: apt-get install python3-zeep",
        file=sys.stderr,
    )
    sys.exit(3)

ALLOWED_HOST = "127.0.0.1"
SOAP11_ENVELOPE = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_ENVELOPE = "http://www.w3.org/2003/05/soap-envelope"


class NetworkRefused(requests.exceptions.ConnectionError):
    pass


def refuse_unless_loopback(url):
    host = urlparse(url).hostname
    if host != ALLOWED_HOST:
        raise NetworkRefused(f"zeep tried to reach {url}: only {ALLOWED_HOST} is allowed in this test")


class LoopbackOnlyAdapter(HTTPAdapter):
    """Sends only to 127.0.0.1, and records what was sent and answered."""

    def __init__(self, log):
        super().__init__()
        self.log = log

    def send(self, request, *args, **kwargs):
        refuse_unless_loopback(request.url)
        body = request.body
        if isinstance(body, bytes):
            body = body.decode("utf-8", "replace")
        entry = {
            "method": request.method,
            "url": request.url,
            "contentType": request.headers.get("Content-Type"),
            "soapAction": request.headers.get("SOAPAction"),
            "body": body,
        }
        self.log.append(entry)
        response = super().send(request, *args, **kwargs)
        entry["status"] = response.status_code
        entry["responseContentType"] = response.headers.get("Content-Type")
        entry["responseBody"] = response.content.decode("utf-8", "replace")
        return response


class LoopbackOnlyTransport(Transport):
    """zeep reads file paths and file:// URLs without the session: refuse those too."""

    def load(self, url):
        refuse_unless_loopback(url)
        return super().load(url)


def encode_uri_component(text):
    # encodeURIComponent leaves A-Z a-z 0-9 - _ . ! ~ * ' ( ) as they are and UTF-8-encodes the rest.
    return quote(text, safe="-_.!~*'()")


def sign_request(key, operation, params):
    """DECISIONS.md section 5, written independently of the server's code."""
    pairs = "&".join(f"{name}={encode_uri_component(params[name])}" for name in sorted(params) if name != "sign")
    canonical = f"{operation}\n{pairs}"
    return hmac.new(key.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).hexdigest()


def result_element(value):
    """The XML element zeep returns for an s:any mixed result, however zeep chose to wrap it."""
    if isinstance(value, etree._Element):
        return value
    if isinstance(value, (list, tuple)):
        for item in value:
            found = result_element(item)
            if found is not None:
                return found
        return None
    if isinstance(value, str):
        return etree.fromstring(value.encode("utf-8"))
    if value is None:
        return None
    for attribute in ("_value_1", "_raw_elements"):
        if hasattr(value, attribute):
            found = result_element(getattr(value, attribute))
            if found is not None:
                return found
    return None


def describe(value):
    element = result_element(value)
    if element is None:
        return {"python_type": type(value).__name__, "repr": repr(value)}
    return {
        "python_type": type(value).__name__,
        "tag": etree.QName(element).localname,
        "attrs": dict(element.attrib),
        "text": element.text,
        "children": len(element),
    }


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in ("soap11", "soap12"):
        print("usage: zeep_client.py BASE_URL ACCOUNT PASSWORD soap11|soap12", file=sys.stderr)
        sys.exit(2)
    base, account, password, binding = sys.argv[1:]
    suffix = "Soap12" if binding == "soap12" else "Soap"

    log = []
    session = requests.Session()
    session.mount("http://", LoopbackOnlyAdapter(log))
    session.mount("https://", LoopbackOnlyAdapter(log))
    transport = LoopbackOnlyTransport(session=session, timeout=20, operation_timeout=20)

    def service(name):
        client = zeep.Client(f"{base}/{name}.asmx?WSDL", transport=transport)
        return client.bind(name, f"{name}{suffix}")

    oauth = service("OAuthService")
    files = service("FileService")
    users = service("UserService")
    wsdl_requests = [entry["url"] for entry in log]

    seen = {"binding": binding, "zeep": zeep.__version__, "wsdlRequests": wsdl_requests}

    login = oauth.Login(uid=account, pwd=password)
    seen["login"] = describe(login)
    token_element = result_element(login)
    uid = int(token_element.get("uid"))
    token = token_element.text
    key = token_element.get("key")

    def signed(proxy, operation, **params):
        values = {"uid": uid, "token": token, **params}
        sign = sign_request(key, operation, {name: str(value) for name, value in values.items()})
        return describe(getattr(proxy, operation)(**values, sign=sign))

    listing = {"dir": "0", "order": "name", "desc": "0"}
    seen["getFiles"] = signed(users, "GetFiles", **listing)
    seen["folderRename"] = signed(files, "FolderRename", dirid=1, newname="x")
    wrong_sign = sign_request("not-the-key", "GetFiles", {"uid": str(uid), "token": token, **listing})
    seen["wrongSign"] = describe(users.GetFiles(uid=uid, token=token, **listing, sign=wrong_sign))
    seen["logout"] = signed(oauth, "Logout")
    seen["afterLogout"] = signed(users, "GetFiles", **listing)

    seen["http"] = [
        {
            "method": entry["method"],
            "url": entry["url"],
            "contentType": entry["contentType"],
            "soapAction": entry["soapAction"],
            "envelope": envelope_namespace(entry["body"]),
            "status": entry.get("status"),
            "responseContentType": entry.get("responseContentType"),
            "responseEnvelope": envelope_namespace(entry.get("responseBody")) if entry["method"] == "POST" else None,
        }
        for entry in log
    ]
    print(json.dumps(seen))


def envelope_namespace(body):
    if not body:
        return None
    try:
        root = etree.fromstring(body.encode("utf-8"))
    except etree.XMLSyntaxError:
        return None
    return etree.QName(root).namespace if etree.QName(root).localname == "Envelope" else None


if __name__ == "__main__":
    main()
