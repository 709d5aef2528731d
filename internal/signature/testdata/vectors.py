# Computes vectors.json with Python's hmac/hashlib/base64, a path that shares
# no code with the Go package, so that the Go tests check the Go code against
# an independent implementation of decisions section 1. Run from this folder:
#   python3 vectors.py > vectors.json
import base64, hashlib, hmac, json

SECRET = "sk_test_docs_only_Wm3Zr8Qp1Ly6Vt4Nh9Kc2Bx7Fd5Gs0Ja"
ACCESS = "ak_sandbox_7Hq2LmX9pR4tV6wK"

cases = [
    ("get_with_query", SECRET, "GET", "/api/v1/cards/information?bin=42424242", ACCESS, "1767225600", "n0nce-GET-0000001", ""),
    ("post_json", SECRET, "POST", "/api/v1/payment-sessions", ACCESS, "1767225601", "Xk3_9aQm2Zp7Lr4Tw8Vb",
     '{"amount_minor":1234,"currency":"USD","order_id":"order-1001","return_url":"https://shop.example/return"}'),
    ("post_empty_body", SECRET, "POST", "/api/v1/payments/3f1c2a9e-7b4d-4e8a-9c21-5d6f7a8b9c0d/cancel", ACCESS, "1767225602", "cancel_nonce_000002", ""),
    ("unicode_body", SECRET, "POST", "/api/v1/payment-sessions", ACCESS, "1767225603", "unicode-nonce-0003",
     '{"amount_minor":500,"currency":"EUR","order_id":"ümlaut-1","description":"Café – 東京 🚀"}'),
    ("lower_case_method", SECRET, "post", "/api/v1/payments/3f1c2a9e-7b4d-4e8a-9c21-5d6f7a8b9c0d/capture", ACCESS, "1767225604", "lowercase-method-04",
     '{"amount_minor":500}'),
    ("long_nonce", SECRET, "GET", "/api/v1/payment-channels", ACCESS, "1767225605", ("aZ09_-" * 22)[:128], ""),
    ("query_sent_encoded", "sk_live_docs_only_Q7tY2uI9oP4aS6dF1gH3jK8lZ0xC5vB", "GET",
     "/api/v1/saved-cards?customer_reference=cust%2B42%40shop&limit=10", "ak_live_Z9y8X7w6V5u4", "1767225606", "percent-encoded-q-06", ""),
]

out = []
for name, secret, method, target, ak, ts, nonce, body in cases:
    b = body.encode("utf-8")
    canonical = "\n".join([method.upper(), target, ak, ts, nonce, hashlib.sha256(b).hexdigest()])
    sig = base64.b64encode(hmac.new(secret.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).digest()).decode()
    out.append({"name": name, "secret": secret, "method": method, "target": target, "access_key": ak,
                "timestamp": ts, "nonce": nonce, "body": body, "canonical": canonical, "signature": sig})
print(json.dumps(out, indent=2, ensure_ascii=False))
