#!/usr/bin/env bash
# usage: tests/recordings/record_gestures.sh target/release/drape tests/recordings
# Records the real-window gestures replayed by tests/drape/recordings.rs, under Xvfb with
# xdotool (apt-get install -y xvfb xdotool), from the repository root. The .png and .json
# beside each recording are the recorded run's screenshot and --frames line (not committed).
bin=$1 dir=$2
run() { # name preset frames gesture-function
  name=$1 preset=$2 frames=$3 fn=$4
  inner() {
    "$bin" --preset "$preset" --frames "$frames" --record "$dir/$name.drec" --screenshot "$dir/$name.png" > "$dir/$name.json" 2>"$dir/$name.err" &
    app=$!
    win=$(xdotool search --sync --onlyvisible --class miniquad-application | head -1)
    eval $(xdotool getwindowgeometry --shell "$win")
    sleep 1.5
    $fn
    wait $app
  }
  export -f inner; export name preset frames fn bin dir
  xvfb-run -a -s "-screen 0 1280x800x24" bash -c "$(declare -f inner grabs corner cut pins drag_by); inner"
  cat "$dir/$name.json"
}
drag_by() { # x0 y0 dx dy steps
  xdotool mousemove $1 $2; sleep 0.15; xdotool mousedown 1; sleep 0.1
  for k in $(seq 1 $5); do xdotool mousemove $(($1 + $3*k/$5)) $(($2 + $4*k/$5)); sleep 0.04; done
  sleep 0.4; xdotool mouseup 1; sleep 1.2
}
grabs() {
  cx=$((X + WIDTH/2)); cy=$((Y + HEIGHT/2))
  drag_by $cx $cy 150 0 12; drag_by $cx $cy 0 -120 12; drag_by $cx $cy -150 0 12; drag_by $cx $cy 0 120 12
}
corner() {
  x0=$((X + WIDTH*715/1280)); y0=$((Y + HEIGHT*410/800))
  xdotool mousemove $x0 $y0; sleep 0.3; xdotool mousedown 1; sleep 0.1
  for k in $(seq 1 50); do xdotool mousemove $((x0 + 250*k/50)) $((y0 + 150*k/50)); sleep 0.05; done
  sleep 1; xdotool mouseup 1
}
cut() {
  y1=$((Y + HEIGHT*47/100)); xa=$((X + WIDTH*30/100)); xb=$((X + WIDTH*72/100))
  xdotool mousemove $xa $y1; sleep 0.1; xdotool mousedown 3
  for k in $(seq 1 25); do xdotool mousemove $((xa + (xb-xa)*k/25)) $((y1 + 10*k/25)); sleep 0.03; done
  xdotool mouseup 3
}
pins() {
  for p in "520 300" "700 300" "520 300"; do
    set -- $p; xdotool mousemove $((X + $1)) $((Y + $2)); sleep 0.2
    xdotool keydown ctrl; sleep 0.05; xdotool click 1; sleep 0.05; xdotool keyup ctrl; sleep 0.8
  done
}
export -f grabs corner cut pins drag_by run
run grab_four_ways presets/default.ron 420 grabs
run corner_pull presets/tearable_sheet.ron 240 corner
run cut presets/default.ron 150 cut
run ctrl_click_pins presets/default.ron 150 pins
