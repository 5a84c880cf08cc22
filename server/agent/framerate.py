"""The capture's frame rate: 60 frames a second where the desktop's cores afford it at the size the viewer's tab gave
it, else 30. At 60 fps each key press waits half as long for the next capture and each frame is half as big on the
link (bench:stream, 2 Mbit/s, +40 ms: key → photon p50 86 → 71 ms at 1280×854), for twice the CPU.

Capture, I420 conversion and x264 cost about 6-9 ms of CPU per megapixel a frame (bench:stream: 0.39 cores for
1280×854 at 60 fps on a 2-core desktop; 1.13 for 1920×1080), so 60 fps goes to desktops with at least a core per
640×1024 pixels: 1280×1024 on 2 cores (about a third of them), 1920×1080 from 4.
"""

PIXELS_AT_60_PER_CORE = 640 * 1024


def fps_for(w, h, cpus):
    """The frame rate for a w x h desktop with `cpus` cores."""
    return 60 if w * h <= max(1, cpus) * PIXELS_AT_60_PER_CORE else 30


def vbv_ms(fps):
    """The rate control's buffer: 1.5 frame intervals, so no frame is much bigger than the link carries in that time."""
    return max(10, round(1500 / fps))
