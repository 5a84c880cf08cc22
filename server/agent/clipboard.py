"""The desktop's clipboard for its viewer: text from the tab goes into it (both X selections), and what is copied in
the desktop goes back to the tab (read with xclip when clipwatch.py says a copy was made).
"""
import subprocess
import threading
import time


class Clipboard:
    """One viewer's clipboard: `set` puts the tab's text in the desktop; `read` sends the desktop's to the tab when it
    changed. Reads run in a thread (xclip may wait for the selection's owner), one at a time: copies made during a read
    make one more read after it, so a tenant's loop of copies costs one xclip after another, never a thread each."""

    def __init__(self, send):
        self.send = send  # sends the text to the tab; False when it could not
        self.text = None
        self.lock = threading.Lock()
        self.reading = False
        self.again = False
        self.closed = False

    def set(self, text):
        self.text = text
        try:
            # xclip forks and keeps owning the selection after we have written it.
            # Both selections: Ctrl+V pastes the clipboard, Shift+Insert (xterm, VNC viewers) the primary selection.
            for sel in ('primary', 'clipboard'):
                subprocess.run(['xclip', '-selection', sel, '-i'], input=text.encode(), timeout=3,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # The tab sends a paste key right after the text: hold the input queue until the desktop's clipboard has it.
            for _ in range(20):
                if _desktop_text(timeout=1) == text:
                    break
                time.sleep(0.025)
        except (OSError, subprocess.SubprocessError):
            pass

    def read(self):
        """Reads the desktop's clipboard and sends it when it changed. True (a GLib timer goes on calling it)."""
        with self.lock:
            if self.closed:
                return False
            if self.reading:
                self.again = True
                return True
            self.reading = True
        threading.Thread(target=self._read_while_asked, daemon=True).start()
        return True

    def close(self):
        with self.lock:
            self.closed = True

    def _read_while_asked(self):
        while True:
            self._read_once()
            with self.lock:
                if not self.again or self.closed:
                    self.reading = False
                    return
                self.again = False

    def _read_once(self):
        try:
            text = _desktop_text(timeout=2)
        except (OSError, subprocess.SubprocessError):
            return
        if text is None:
            return
        text = text[:1024 * 1024]
        if text != self.text and self.send(text):
            self.text = text


def _desktop_text(timeout):
    """The desktop's CLIPBOARD text, or None when xclip could not read it (no owner, nothing text)."""
    out = subprocess.run(['xclip', '-selection', 'clipboard', '-o'], capture_output=True, timeout=timeout)
    return out.stdout.decode('utf-8', 'replace') if out.returncode == 0 else None
