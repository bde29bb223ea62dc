"""The email backend of local work (the default; `make run` and DEBUG): each email printed as a
developer reads it."""

from email.mime.base import MIMEBase

from django.core.mail.backends.console import EmailBackend


class ConsoleEmailBackend(EmailBackend):
    """Django's console backend, printing what a developer checks: the subject, sender and
    recipients, the plain-text part, and each attachment by name, type and size.

    Django's own prints the whole MIME message, attachments in base64: the demo data's five
    confirmation emails (a PDF and a calendar entry each) made 2,800 lines of it, burying the
    demo accounts `make run` prints. The file backend still writes whole messages."""

    def write_message(self, message) -> None:
        lines = [
            f"Subject: {message.subject}",
            f"From: {message.from_email}",
            f"To: {', '.join(message.recipients())}",
            "",
            message.body.rstrip("\n"),
            "",
        ]
        lines += [
            f"Also as {kind}, {len(content)} characters" for content, kind in _alternatives(message)
        ]
        lines += [
            f"Attached: {name} ({kind}, {size} bytes)" for name, kind, size in _attachments(message)
        ]
        self.stream.write("\n".join(lines) + "\n" + "-" * 79 + "\n")


def _alternatives(message) -> list[tuple[str, str]]:
    return [(content, mimetype) for content, mimetype in getattr(message, "alternatives", [])]


def _attachments(message) -> list[tuple[str, str, int]]:
    """(name, type, size) of each attachment: a (filename, content, mimetype) triple, or a MIME
    part already made."""
    found = []
    for attachment in message.attachments:
        if isinstance(attachment, MIMEBase):
            payload = attachment.get_payload(decode=True) or b""
            name = attachment.get_filename() or "(no name)"
            found.append((name, attachment.get_content_type(), len(payload)))
            continue
        name, content, mimetype = attachment
        size = len(content.encode() if isinstance(content, str) else content)
        found.append((name or "(no name)", mimetype or "application/octet-stream", size))
    return found
