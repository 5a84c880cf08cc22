"""The desktop size a viewer's tab asks for (no X here: the agent's tests run it on any host).

The desktop takes the tab's shape: scaled down when the tab is larger than the desktop's maximum, scaled up when it is
smaller than MIN in either direction, so a phone held upright gets an upright desktop that fills its screen (not a
640-wide landscape one shown in a band across it). An upright tab has the maximum upright too (1080x1920 for
1920x1080: the same pixels, and within the encoder's H.264 level): under the landscape maximum a 360x695 phone got
640x1080, shown with bands above and below. A shape that cannot keep both (a strip longer than the maximum allows at
the minimum's size) is held inside MIN..maximum in each direction. Even numbers: the encoder's I420 wants them.
"""
MIN_W, MIN_H = 640, 400


def fit(w, h, max_w, max_h):
    w, h = max(1, int(w)), max(1, int(h))
    if h > w and max_w > max_h:
        max_w, max_h = max_h, max_w
    scale = min(1.0, max_w / w, max_h / h)
    if scale == 1.0:
        scale = max(1.0, MIN_W / w, MIN_H / h)
    w, h = int(w * scale), int(h * scale)
    return max(MIN_W, min(max_w, w)) // 2 * 2, max(MIN_H, min(max_h, h)) // 2 * 2
