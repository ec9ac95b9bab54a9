// Ten Minute Physics 15 (Matthias Müller's self-collision tutorial) on its own scene, timed in
// Node: a 30 × 200 strip, 1 cm spacing and thickness, 10 substeps, Δt = 1/60 s, no pins.
// TMP 15's code is not part of Drape: this script reads the tutorial's page (a local copy of
// `tenMinutePhysics/15-selfCollision.html` from github.com/matthias-research/pages) and takes
// its vector helpers and its `Hash` and `Cloth` classes from it at run time, leaving out the
// three.js drawing. Usage:
//   node benches/tmp15_self_collision.js PATH/15-selfCollision.html [FRAMES] [COLLIDE 1|0]
// Prints one JSON line: ms_per_frame (wall time of the frames alone), frames, collide, ymin.
'use strict';
const fs = require('fs');
const [page, framesArg, collideArg] = process.argv.slice(2);
if (!page) {
  console.error('usage: node tmp15_self_collision.js PATH/15-selfCollision.html [FRAMES] [1|0]');
  process.exit(2);
}
const html = fs.readFileSync(page, 'utf8');
const between = (from, to) => {
  const start = html.indexOf(from);
  const end = html.indexOf(to, start);
  if (start < 0 || end < 0) throw new Error(`marker not found: ${from} … ${to}`);
  return html.slice(start, end);
};
// Vector helpers up to the scene; Hash and Cloth up to the first global after them.
const helpers = between('function vecSetZero', 'var gThreeScene');
let classes = between('class Hash', 'var timeFrames');
// Drop the drawing: the constructor's meshes, the updates of them and the method itself.
classes = classes.replace(/\/\/ visual meshes[\s\S]*?this\.updateVisMeshes\(\);/, '');
classes = classes.replace(/this\.updateVisMeshes\(\);/g, '');
classes = classes.replace(/updateVisMeshes\(\) \{[\s\S]*?\n\t\t\t\t\}/, '');
const Cloth = new Function(`${helpers}\n${classes}\nreturn Cloth;`)();
const frames = parseInt(framesArg || '600', 10);
const cloth = new Cloth(null, 30, 200, 0.01, 0.01);
cloth.handleCollisions = (collideArg || '1') === '1';
const started = process.hrtime.bigint();
for (let f = 0; f < frames; f++) cloth.simulate(1 / 60, 10, [0, -10, 0]);
const ms = Number(process.hrtime.bigint() - started) / 1e6;
let ymin = Infinity;
for (let i = 0; i < cloth.numParticles; i++) ymin = Math.min(ymin, cloth.pos[3 * i + 1]);
console.log(JSON.stringify({ ms_per_frame: ms / frames, frames, collide: cloth.handleCollisions, ymin }));
