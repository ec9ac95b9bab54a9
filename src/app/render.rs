//! Drawing the scene: the cloth as a lit double-sided mesh split into u16-indexed chunks,
//! wireframe, particles, pins, the strain / force heat map, colliders, the ground and the grab
//! line.
//!
//! Lighting runs in a small fragment shader: the smooth vertex normal travels in the vertex's
//! `normal.xyz`, and `gl_FrontFacing` picks the side — back faces flip the normal and, when
//! `normal.w` = 1 (plain cloth), take the back colour instead of the vertex colour. Heat-mapped
//! cloth and colliders set `normal.w` = 0 so both sides show the vertex colour. The light is a
//! key light from above ([`KEY_LIGHT`]) with a sky/ground ambient, a weak head light and a
//! small highlight, so folds read as folds; the cloth casts a shadow along a steeper [`SHADOW_LIGHT`] onto
//! the ground (each vertex projected onto the plane, drawn as one opaque darker patch so
//! overlapping layers do not darken twice).
//!
//! The wireframe is drawn with each line end moved a little toward the eye ([`lift_toward`]):
//! along the view ray, so the line stays where it was on screen but always wins the depth test
//! against the surface it lies on (lines and triangles rasterise to slightly different depths,
//! which drew the edges as broken dashes).
//!
//! Each object of the scene is drawn in its own chunks with its own look (colours, pattern and
//! repeat: its `appearance` or the scene's), the back colour set per chunk. The pattern's
//! coordinates are per triangle corner: a particle whose corners disagree (a texture seam) is
//! drawn as one vertex per distinct coordinate ([`TexturedVertices`]), all with its smooth
//! normal, so the seam is neither smeared nor shaded as a crease.
//!
//! macroquad's `Mesh` has u16 indices and one draw call holds at most the configured vertex /
//! index capacity, so the triangles are grouped into [`Chunk`]s that each reference at most
//! [`CHUNK_VERTICES`] distinct vertices; the grouping is recomputed only when the topology
//! changes, and each frame only the vertex data is refreshed.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{EulerRot, Quat, Vec3, Vec4};
use macroquad::color::Color;
use macroquad::material::{gl_use_default_material, gl_use_material, load_material, Material, MaterialParams};
use macroquad::miniquad::{Comparison, MipmapFilterMode, PipelineParams, ShaderSource, TextureWrap, UniformDesc, UniformType};
use macroquad::models::{draw_cube, draw_line_3d, draw_mesh, Mesh, Vertex};
use macroquad::shapes::{draw_circle, draw_circle_lines, draw_line};
use macroquad::texture::{FilterMode, Texture2D};
use macroquad::window::get_internal_gl;

use drape::preset::{Appearance, Preset};
use drape::sim::collision::{LoadedShape, MeshShape};
use drape::sim::{Cloth, Collider, TexturedVertices};

use super::camera::{Bounds, OrbitCamera};
use super::input::Viewport;
use super::state::AppState;

/// Draw-call capacities requested from macroquad (vertices fit u16 indices).
pub const DRAW_CALL_VERTICES: usize = 65_536;
/// Index capacity per draw call: three indices per vertex is ample for a cloth.
pub const DRAW_CALL_INDICES: usize = 3 * DRAW_CALL_VERTICES;
/// Distinct vertices per chunk (strictly below the draw-call capacity, which macroquad clamps).
pub const CHUNK_VERTICES: usize = 65_000;
/// Indices per chunk.
pub const CHUNK_INDICES: usize = 195_000;

const GROUND: Color = Color::new(0.78, 0.79, 0.76, 1.0);
const SOLID: Color = Color::new(0.62, 0.66, 0.70, 1.0);
/// A collider under the cursor that a left press would move, or being moved.
const SOLID_HOVER: Color = Color::new(0.95, 0.78, 0.25, 1.0);
const WIRE: Color = Color::new(0.08, 0.08, 0.10, 0.8);
const PARTICLE: Color = Color::new(0.10, 0.10, 0.12, 1.0);
const PIN: Color = Color::new(0.85, 0.05, 0.15, 1.0);
/// Sewing thread: pale, so it reads on the dark and the light cloths.
const STITCH: Color = Color::new(0.96, 0.93, 0.80, 1.0);
/// Distance in m below which a stitch counts as shut (its thread is not drawn).
const STITCH_SHUT: f32 = 0.002;
/// Share of the way between two stitches a running stitch's dash covers.
const STITCH_DASH: f32 = 0.6;
const GRAB: Color = Color::new(1.0, 0.85, 0.0, 1.0);
/// Ring around the particle a left press would grab.
const HOVER: Color = Color::new(1.0, 0.85, 0.0, 0.9);
/// Segments of the grab radius's circle.
const GRAB_CIRCLE_SEGMENTS: usize = 48;
/// Ring around the particle a Ctrl-click would pin or unpin.
const HOVER_PIN: Color = Color::new(0.85, 0.05, 0.15, 0.9);
/// The cloth's shadow on the ground.
const SHADOW: Color = Color::new(0.78 * 0.62, 0.79 * 0.62, 0.76 * 0.64, 1.0);
/// Direction toward the key light (normalised in use): above, a little in front and to the
/// left of the default view, so the front of a hanging curtain is lit and its shadow falls
/// behind and beside it where the camera sees it.
pub const KEY_LIGHT: Vec3 = Vec3::new(-0.4, 1.0, 0.5);
/// Direction the shadows are cast along: the key light's azimuth, but steeper (72° above the
/// horizon instead of 57°), so a shadow reads as the ground contact cue it is for: a sheet
/// hanging 2 m up casts it 0.64 m to the side, not 1.3 m, and a collider's sits close under
/// it. (At the key light's own angle the shadow of a tall sheet fell far off to the side
/// while the light looked overhead; issue 35.)
pub const SHADOW_LIGHT: Vec3 = Vec3::new(-0.2, 1.0, 0.25);
/// Fraction of the distance to the eye by which wireframe line ends are moved toward it.
const WIRE_LIFT: f32 = 0.003;
/// Height of the shadow above the ground plane, in m (below the grid lines at 2 mm).
const SHADOW_LIFT: f32 = 0.001;
/// Colour of the cutting stroke trail.
const CUT: Color = Color::new(1.0, 0.2, 0.6, 1.0);

/// What to colour the cloth by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeatMode {
    /// Front and back colours.
    Off,
    /// Largest |strain| of the vertex's stretch edges, scaled by the heat range.
    Strain,
    /// Largest stretch-edge tension, scaled by the largest in the cloth.
    Force,
}

/// The View panel's switches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewOptions {
    /// Diffuse lighting (off = flat colours).
    pub shading: bool,
    /// Triangle edges.
    pub wireframe: bool,
    /// A dot per particle.
    pub particles: bool,
    /// Markers on pinned particles.
    pub pins: bool,
    /// Seams: the thread of each open stitch and a running stitch along closed ones.
    pub stitches: bool,
    /// Heat map mode.
    pub heat: HeatMode,
    /// Strain that shows as full red (0.05 = 5 %).
    pub heat_range: f32,
    /// Colliders and the ground.
    pub colliders: bool,
}

impl Default for ViewOptions {
    fn default() -> Self {
        Self {
            shading: true,
            wireframe: false,
            particles: false,
            pins: true,
            stitches: true,
            heat: HeatMode::Off,
            heat_range: 0.05,
            colliders: true,
        }
    }
}

/// A group of triangles whose vertices fit one u16-indexed draw call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunk {
    /// Particle index of each local vertex.
    pub globals: Vec<u32>,
    /// Local vertex indices, three per triangle.
    pub indices: Vec<u16>,
}

/// Splits `triangles` over `vertex_count` particles into chunks of at most `max_vertices`
/// distinct vertices and `max_indices` indices, in triangle order.
pub fn chunk_triangles(triangles: &[[u32; 3]], vertex_count: usize, max_vertices: usize, max_indices: usize) -> Vec<Chunk> {
    let mut chunks = vec![Chunk::default()];
    // owner[g] = chunk that has a local copy of particle g, slot[g] = its local index.
    let mut owner = vec![usize::MAX; vertex_count];
    let mut slot = vec![0u16; vertex_count];
    for tri in triangles {
        let current = chunks.len() - 1;
        let new = tri.iter().filter(|&&g| owner[g as usize] != current).count();
        let chunk = &chunks[current];
        if chunk.globals.len() + new > max_vertices || chunk.indices.len() + 3 > max_indices {
            chunks.push(Chunk::default());
        }
        let current = chunks.len() - 1;
        let chunk = &mut chunks[current];
        for &g in tri {
            let g = g as usize;
            if owner[g] != current {
                owner[g] = current;
                slot[g] = chunk.globals.len() as u16;
                chunk.globals.push(g as u32);
            }
            chunk.indices.push(slot[g]);
        }
    }
    chunks.retain(|c| !c.indices.is_empty());
    chunks
}

/// Blue → green → yellow → red for `t` in [0, 1] (clamped).
pub fn heat_color(t: f32) -> Color {
    let stops = [
        Vec3::new(0.15, 0.25, 0.85),
        Vec3::new(0.10, 0.75, 0.35),
        Vec3::new(0.95, 0.85, 0.10),
        Vec3::new(0.90, 0.12, 0.08),
    ];
    let x = t.clamp(0.0, 1.0) * (stops.len() - 1) as f32;
    let i = (x.floor() as usize).min(stops.len() - 2);
    let c = stops[i].lerp(stops[i + 1], x - i as f32);
    Color::new(c.x, c.y, c.z, 1.0)
}

fn vertex(position: Vec3, normal: Vec3, color: Color, two_tone: bool) -> Vertex {
    textured_vertex(position, glam::Vec2::ZERO, normal, color, two_tone)
}

fn textured_vertex(position: Vec3, uv: glam::Vec2, normal: Vec3, color: Color, two_tone: bool) -> Vertex {
    Vertex {
        position,
        uv,
        color: color.into(),
        normal: normal.extend(if two_tone { 1.0 } else { 0.0 }),
    }
}

const VERTEX_SHADER: &str = r#"#version 100
attribute vec3 position;
attribute vec2 texcoord;
attribute vec4 color0;
attribute vec4 normal;

varying lowp vec4 color;
varying mediump vec3 v_normal;
varying mediump vec3 v_position;
varying mediump float v_two_tone;
varying mediump vec2 v_uv;

uniform mat4 Model;
uniform mat4 Projection;

void main() {
    gl_Position = Projection * Model * vec4(position, 1);
    color = color0 / 255.0;
    v_uv = texcoord;
    v_normal = normal.xyz;
    v_two_tone = normal.w;
    v_position = position;
}"#;

const FRAGMENT_SHADER: &str = r#"#version 100
precision mediump float;

varying lowp vec4 color;
varying mediump vec3 v_normal;
varying mediump vec3 v_position;
varying mediump float v_two_tone;
varying mediump vec2 v_uv;

uniform vec4 BackColor;
uniform vec4 Eye;
uniform vec4 Key;
uniform float Shade;
uniform sampler2D Texture;

void main() {
    vec3 n = v_normal;
    float len = length(n);
    n = len > 0.0 ? n / len : vec3(0.0, 1.0, 0.0);
    vec3 base = color.rgb;
    if (!gl_FrontFacing) {
        n = -n;
        base = mix(base, BackColor.rgb, v_two_tone);
    }
    // The fabric pattern (white when there is none), tiled by the texture's repeat wrap, so the
    // mipmaps are picked from smooth coordinates (fract() would jump at every tile's edge).
    base *= texture2D(Texture, v_uv).rgb;
    vec3 to_eye = normalize(Eye.xyz - v_position);
    vec3 key = normalize(Key.xyz);
    // Sky/ground ambient (faces turned down are darker), the key light, a weak head light so
    // folds facing the viewer never go black, and a small highlight that traces the folds.
    float sky = 0.5 + 0.5 * n.y;
    float diffuse = max(dot(n, key), 0.0);
    float head = max(dot(n, to_eye), 0.0);
    float highlight = pow(max(dot(n, normalize(key + to_eye)), 0.0), 32.0);
    float lit = 0.16 + 0.18 * sky + 0.58 * diffuse + 0.2 * head;
    gl_FragColor = vec4(mix(base, base * lit + 0.10 * highlight, Shade), color.a);
}"#;

fn lit_material() -> Result<Material, macroquad::Error> {
    load_material(
        ShaderSource::Glsl {
            vertex: VERTEX_SHADER,
            fragment: FRAGMENT_SHADER,
        },
        MaterialParams {
            pipeline_params: PipelineParams {
                depth_write: true,
                depth_test: Comparison::LessOrEqual,
                ..Default::default()
            },
            uniforms: vec![
                UniformDesc::new("BackColor", UniformType::Float4),
                UniformDesc::new("Eye", UniformType::Float4),
                UniformDesc::new("Key", UniformType::Float4),
                UniformDesc::new("Shade", UniformType::Float1),
            ],
            textures: vec![],
        },
    )
}

/// Cached geometry and per-frame scratch buffers.
pub struct Renderer {
    material: Option<Material>,
    /// Why the lit material could not be made (the scene is then drawn unlit).
    pub material_error: Option<String>,
    key: Option<(u64, u64)>,
    chunks: Vec<Chunk>,
    meshes: Vec<Mesh>,
    edges: Vec<[u32; 2]>,
    solids: Vec<Mesh>,
    /// The looks of the scene's mesh colliders, one per shape.
    mesh_looks: Vec<MeshLook>,
    /// The colliders' shadows on the ground (empty without one).
    solid_shadows: Vec<Mesh>,
    /// What `solids` and the ground were built for: the scene version, the colliders' poses
    /// and the highlighted collider.
    solids_key: Option<(u64, Vec<Collider>, Option<usize>)>,
    /// Ground height and the bounds its square is sized from.
    ground: Option<(f32, Bounds)>,
    ground_mesh: Option<Mesh>,
    /// The cloth's shadow on the ground, one mesh per chunk.
    shadows: Vec<Mesh>,
    normals: Vec<Vec3>,
    /// The drawn vertices: a particle once per distinct texture coordinate of its corners.
    corners: TexturedVertices,
    /// The object (material slot) each chunk belongs to.
    chunk_objects: Vec<usize>,
    /// Each object's colours and pattern (its own or the scene's), and the scene version
    /// they were loaded for.
    looks: Vec<Look>,
    look_key: Option<u64>,
    /// Why a pattern could not be loaded (drawn in plain colours then), once.
    pub appearance_error: Option<String>,
    heat: Vec<f32>,
    /// The force shown as full red in the last force heat map, in N.
    heat_force_max: f32,
}

impl Renderer {
    /// Compiles the lit shader (must run inside the window).
    pub fn new() -> Self {
        let (material, material_error) = match lit_material() {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(format!("lighting shader unavailable ({e:?}); drawing unlit"))),
        };
        Self {
            material,
            material_error,
            key: None,
            chunks: Vec::new(),
            meshes: Vec::new(),
            edges: Vec::new(),
            solids: Vec::new(),
            mesh_looks: Vec::new(),
            solid_shadows: Vec::new(),
            solids_key: None,
            ground: None,
            ground_mesh: None,
            shadows: Vec::new(),
            normals: Vec::new(),
            corners: TexturedVertices::default(),
            chunk_objects: Vec::new(),
            looks: Vec::new(),
            look_key: None,
            appearance_error: None,
            heat: Vec::new(),
            heat_force_max: 0.0,
        }
    }

    /// The force that showed as full red in the last force heat map, in N.
    pub fn heat_force_max(&self) -> f32 {
        self.heat_force_max
    }

    /// Number of cloth draw chunks (for the stats panel).
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Rebuilds the chunking and the edge list when the scene or its topology changed.
    fn refresh_topology(&mut self, cloth: &Cloth, scene_version: u64) {
        let key = (scene_version, cloth.topology_version());
        if self.key == Some(key) {
            return;
        }
        self.key = Some(key);
        let model = cloth.model();
        self.corners = TexturedVertices::new(cloth.particles().len(), cloth.triangles(), &model.corner_uvs);
        (self.chunks, self.chunk_objects) = (Vec::new(), Vec::new());
        for (object, triangles) in triangles_by_object(&self.corners.triangles, cloth.triangles(), &model.material) {
            let chunks = chunk_triangles(&triangles, self.corners.particle.len(), CHUNK_VERTICES, CHUNK_INDICES);
            self.chunk_objects.extend(std::iter::repeat_n(object, chunks.len()));
            self.chunks.extend(chunks);
        }
        self.meshes = chunk_meshes(&self.chunks);
        self.shadows = chunk_meshes(&self.chunks);
        self.edges = unique_edges(cloth.triangles());
    }

    /// Takes each object's colours (its own or the scene's) and loads their patterns when the
    /// scene changed.
    fn refresh_looks(&mut self, preset: &Preset, scene_version: u64) {
        if self.look_key == Some(scene_version) {
            return;
        }
        self.look_key = Some(scene_version);
        self.looks = preset
            .objects()
            .iter()
            .map(|object| object.appearance().unwrap_or(&preset.appearance))
            .map(|appearance| self.load_look(appearance, preset))
            .collect();
    }

    /// The colours of `appearance` with its pattern (plain, with the error kept, when the
    /// pattern cannot be read); the pattern's path is resolved by `preset`.
    fn load_look(&mut self, appearance: &Appearance, preset: &Preset) -> Look {
        let mut look = Look::plain(appearance);
        if let Some(path) = &appearance.texture {
            match load_pattern(&preset.resolve(path)) {
                Ok(texture) => look.texture = Some(texture),
                Err(e) => self.appearance_error = Some(format!("{}: {e}; drawing plain colours", path.display())),
            }
        }
        look
    }

    /// Keeps the looks of the mesh colliders of `colliders`, making those it lacks.
    fn refresh_mesh_looks(&mut self, colliders: &[Collider]) {
        let shapes: Vec<&Arc<MeshShape>> = colliders
            .iter()
            .filter_map(|c| match c {
                Collider::Mesh { shape, .. } => shape.0.as_ref(),
                _ => None,
            })
            .collect();
        self.mesh_looks.retain(|look| shapes.iter().any(|s| Arc::ptr_eq(s, &look.shape)));
        for shape in shapes {
            if !self.mesh_looks.iter().any(|look| Arc::ptr_eq(&look.shape, shape)) {
                self.mesh_looks.push(MeshLook::new(shape));
            }
        }
    }

    /// Rebuilds the collider meshes and the ground when the scene changed, a collider moved
    /// or the highlighted one changed.
    fn refresh_solids(&mut self, cloth: &Cloth, scene_version: u64, highlight: Option<usize>) {
        let unchanged = |(version, poses, lit): &(u64, Vec<Collider>, Option<usize>)| {
            *version == scene_version && poses == cloth.colliders() && *lit == highlight
        };
        if self.solids_key.as_ref().is_some_and(unchanged) {
            return;
        }
        self.refresh_mesh_looks(cloth.colliders());
        let color = |k| if Some(k) == highlight { SOLID_HOVER } else { SOLID };
        self.solids = cloth
            .colliders()
            .iter()
            .enumerate()
            .flat_map(|(k, c)| collider_meshes(c, color(k), &self.mesh_looks))
            .collect();
        let ground = cloth.colliders().iter().find_map(|c| match c {
            Collider::Ground { height, .. } => Some(*height),
            _ => None,
        });
        self.ground = ground.zip(scene_bounds(cloth));
        self.ground_mesh = self.ground.map(|(height, bounds)| ground_mesh(height, bounds));
        self.solid_shadows = match ground {
            Some(height) => self.solids.iter().map(|mesh| shadow_mesh(mesh, height)).collect(),
            None => Vec::new(),
        };
        self.solids_key = Some((scene_version, cloth.colliders().to_vec(), highlight));
    }

    /// Draws the scene of `state` (its cloth, colliders and appearance), the collider
    /// `highlight` (an index into the colliders) in the hover colour; returns the
    /// milliseconds spent building the cloth meshes.
    pub fn draw(&mut self, state: &AppState, camera: &OrbitCamera, view: &ViewOptions, substep: f32, highlight: Option<usize>) -> f64 {
        let (cloth, scene_version) = (&state.cloth, state.scene_version);
        self.refresh_topology(cloth, scene_version);
        self.refresh_looks(&state.preset, scene_version);
        self.refresh_solids(cloth, scene_version, highlight);
        let started = std::time::Instant::now();
        self.fill_cloth(cloth, view, substep);
        if let Some(material) = &self.material {
            material.set_uniform("Eye", camera.eye().extend(1.0));
            material.set_uniform("Key", KEY_LIGHT.extend(0.0));
            material.set_uniform("Shade", if view.shading { 1.0f32 } else { 0.0 });
            gl_use_material(material);
        }
        for (mesh, &object) in self.meshes.iter().zip(&self.chunk_objects) {
            if let Some(material) = &self.material {
                // Setting a uniform ends macroquad's batch, so each object keeps its own.
                let back = look_of(&self.looks, object).back;
                material.set_uniform("BackColor", Vec4::new(back.r, back.g, back.b, 1.0));
            }
            draw_mesh(mesh);
        }
        let build_ms = started.elapsed().as_secs_f64() * 1e3;
        if view.colliders {
            self.draw_colliders();
        }
        gl_use_default_material();
        if view.colliders {
            self.draw_shadow(cloth);
            self.solid_shadows.iter().for_each(draw_mesh);
            self.draw_ground_grid();
        }
        if view.wireframe {
            self.draw_wireframe(cloth, camera.eye());
        }
        if view.particles {
            let size = camera.distance * 0.003;
            for p in cloth.particles().positions() {
                draw_cube(p, Vec3::splat(size), None, PARTICLE);
            }
        }
        if view.stitches {
            draw_stitches(cloth, camera.eye());
        }
        if view.pins {
            let size = camera.distance * 0.012;
            let p = cloth.particles();
            for i in (0..p.len()).filter(|&i| p.is_pinned(i)) {
                draw_cube(p.position(i), Vec3::splat(size), None, PIN);
            }
        }
        build_ms
    }

    /// The held particle and its line to the cursor target, drawn in 2D over the scene so the
    /// cloth never hides them. Call with the default (screen) camera.
    pub fn draw_grab(&self, from: Vec3, target: Vec3, camera: &OrbitCamera, viewport: Viewport) {
        let pixel = |p: Vec3| camera.project(p, viewport.size).map(|px| px + viewport.origin);
        let (Some(a), Some(b)) = (pixel(from), pixel(target)) else { return };
        draw_line(a.x, a.y, b.x, b.y, 2.0, GRAB);
        draw_circle(a.x, a.y, 5.0, GRAB);
        draw_circle_lines(b.x, b.y, 8.0, 2.0, GRAB);
    }

    /// The patch a left press would grab: a circle of `radius` m about `centre` in the plane
    /// normal to `normal` (the hovered triangle's), drawn over the scene. Call with the
    /// default (screen) camera.
    pub fn draw_grab_radius(&self, centre: Vec3, normal: Vec3, radius: f32, camera: &OrbitCamera, viewport: Viewport) {
        let u = normal.any_orthonormal_vector();
        let v = normal.cross(u);
        let pixel = |k: usize| {
            let angle = k as f32 / GRAB_CIRCLE_SEGMENTS as f32 * std::f32::consts::TAU;
            let p = centre + (u * angle.cos() + v * angle.sin()) * radius;
            camera.project(p, viewport.size).map(|px| px + viewport.origin)
        };
        for k in 0..GRAB_CIRCLE_SEGMENTS {
            if let (Some(a), Some(b)) = (pixel(k), pixel(k + 1)) {
                draw_line(a.x, a.y, b.x, b.y, 1.5, Color { a: 0.8, ..HOVER });
            }
        }
    }

    /// A ring around the particle under the cursor: what a left press would grab (yellow) or
    /// a Ctrl-click would pin or unpin (red). Call with the default (screen) camera.
    pub fn draw_hover(&self, at: Vec3, pin: bool, camera: &OrbitCamera, viewport: Viewport) {
        let Some(px) = camera.project(at, viewport.size).map(|px| px + viewport.origin) else {
            return;
        };
        // A pin's ring goes round its marker (about 16 px across), or the marker hides it.
        let (color, ring) = if pin { (HOVER_PIN, 13.0) } else { (HOVER, 7.0) };
        draw_circle_lines(px.x, px.y, ring, 2.0, color);
        draw_circle(px.x, px.y, 2.5, color);
    }

    /// The edges of collider `collider` drawn over everything, faintly: the highlighted
    /// collider (hovered or dragged) stays visible through the cloth. Call with the default
    /// (screen) camera.
    pub fn draw_collider_outline(&self, collider: &Collider, camera: &OrbitCamera, viewport: Viewport) {
        if let Collider::Mesh { position, shape, .. } = collider {
            if let Some(look) = MeshLook::of(&self.mesh_looks, shape) {
                draw_mesh_outline(&look.edges, *position, collider.rotation(), camera, viewport);
            }
            return;
        }
        let Some(mesh) = collider_mesh(collider, SOLID_HOVER) else { return };
        let pixel = |i: u16| {
            let p = mesh.vertices[i as usize].position;
            camera.project(p, viewport.size).map(|px| px + viewport.origin)
        };
        let color = Color { a: 0.45, ..SOLID_HOVER };
        for triangle in mesh.indices.chunks_exact(3) {
            for (a, b) in [(triangle[0], triangle[1]), (triangle[1], triangle[2])] {
                if let (Some(a), Some(b)) = (pixel(a), pixel(b)) {
                    draw_line(a.x, a.y, b.x, b.y, 1.0, color);
                }
            }
        }
    }

    /// Draws cut strokes (pixels, with their age in s) as lines fading out over
    /// [`super::interaction::TRAIL_SECONDS`].
    pub fn draw_cut_trail(&self, strips: &[Vec<(f64, glam::Vec2)>]) {
        for strip in strips {
            for pair in strip.windows(2) {
                let ((age, a), (_, b)) = (pair[0], pair[1]);
                let fade = (1.0 - age / super::interaction::TRAIL_SECONDS).clamp(0.0, 1.0) as f32;
                draw_line(a.x, a.y, b.x, b.y, 3.0, Color { a: 0.9 * fade, ..CUT });
            }
        }
    }

    fn fill_cloth(&mut self, cloth: &Cloth, view: &ViewOptions, substep: f32) {
        cloth.vertex_normals(&mut self.normals);
        let scale = match view.heat {
            HeatMode::Off => 1.0,
            HeatMode::Strain => {
                cloth.vertex_heat(false, substep, &mut self.heat);
                view.heat_range.max(1e-6)
            }
            HeatMode::Force => {
                cloth.vertex_heat(true, substep, &mut self.heat);
                self.heat_force_max = self.heat.iter().copied().fold(1e-6, f32::max);
                self.heat_force_max
            }
        };
        let particles = cloth.particles();
        let corners = &self.corners;
        for ((chunk, mesh), &object) in self.chunks.iter().zip(&mut self.meshes).zip(&self.chunk_objects) {
            let look = look_of(&self.looks, object);
            mesh.vertices.clear();
            mesh.vertices.extend(chunk.globals.iter().map(|&r| {
                let (g, uv) = (corners.particle[r as usize] as usize, corners.uv[r as usize]);
                let (color, two_tone) = match view.heat {
                    HeatMode::Off => (look.front, true),
                    _ => (heat_color(self.heat[g] / scale), false),
                };
                // The repeat is applied here; the pattern texture wraps to tile.
                textured_vertex(particles.position(g), uv * look.repeat, self.normals[g], color, two_tone)
            }));
            // The pattern only on the fabric's own colours, not over a heat map.
            mesh.texture = look.texture.clone().filter(|_| view.heat == HeatMode::Off);
        }
    }

    fn draw_colliders(&self) {
        self.solids.iter().chain(&self.ground_mesh).for_each(draw_mesh);
    }

    fn draw_ground_grid(&self) {
        let Some((height, bounds)) = self.ground else { return };
        let (center, half) = ground_extent(bounds);
        let color = Color::new(0.55, 0.56, 0.54, 1.0);
        let y = height + 0.002; // just above the plane so the lines win the depth test
        let lines = (half / 0.5).round() as i32;
        for k in -lines..=lines {
            let o = k as f32 * 0.5;
            draw_line_3d(
                Vec3::new(center.x + o, y, center.z - half),
                Vec3::new(center.x + o, y, center.z + half),
                color,
            );
            draw_line_3d(
                Vec3::new(center.x - half, y, center.z + o),
                Vec3::new(center.x + half, y, center.z + o),
                color,
            );
        }
    }

    fn draw_wireframe(&self, cloth: &Cloth, eye: Vec3) {
        let p = cloth.particles();
        let end = |i: u32| lift_toward(p.position(i as usize), eye);
        for &[a, b] in &self.edges {
            draw_line_3d(end(a), end(b), WIRE);
        }
    }

    /// The cloth projected along the key light onto the ground, in one flat darker colour.
    fn draw_shadow(&mut self, cloth: &Cloth) {
        let Some((height, _)) = self.ground else { return };
        let particles = cloth.particles();
        let corners = &self.corners;
        for (chunk, mesh) in self.chunks.iter().zip(&mut self.shadows) {
            mesh.vertices.clear();
            mesh.vertices.extend(chunk.globals.iter().map(|&r| {
                let g = corners.particle[r as usize] as usize;
                let at = shadow_point(particles.position(g), SHADOW_LIGHT, height);
                vertex(at, Vec3::Y, SHADOW, false)
            }));
        }
        self.shadows.iter().for_each(draw_mesh);
    }
}

/// The look of object `k` in `looks` (the last one for a slot past the preset's objects).
fn look_of(looks: &[Look], k: usize) -> &Look {
    looks.get(k).or(looks.last()).expect("every scene has an object, so a look")
}

/// An object's cloth colours and fabric pattern, as the shader takes them.
struct Look {
    front: Color,
    back: Color,
    repeat: f32,
    texture: Option<Texture2D>,
}

impl Look {
    /// The colours of `appearance`, without its pattern (loaded separately).
    fn plain(appearance: &Appearance) -> Self {
        let colour = |c: Vec3| Color::new(c.x, c.y, c.z, 1.0);
        Self {
            front: colour(appearance.colour),
            back: colour(appearance.back_colour),
            repeat: appearance.texture_repeat,
            texture: None,
        }
    }
}

/// Reads a PNG pattern into a texture: repeating, and mipmapped so a pattern seen small (a
/// far or slanted cloth) averages instead of shimmering.
fn load_pattern(path: &std::path::Path) -> Result<Texture2D, String> {
    let bytes = drape::input_file::read_limited(path, drape::input_file::TEXTURE_LIMIT).map_err(|e| e.to_string())?;
    let image = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .map_err(|e| e.to_string())?
        .to_rgba8();
    let (width, height) = (u16::try_from(image.width()), u16::try_from(image.height()));
    let (Ok(width), Ok(height)) = (width, height) else {
        return Err("a pattern is at most 65535 pixels a side".into());
    };
    let texture = Texture2D::from_rgba8(width, height, image.as_raw());
    texture.set_filter(FilterMode::Linear);
    let id = texture.raw_miniquad_id();
    // SAFETY: the window's GL context is live while the app draws (this runs in its loop), and
    // nothing else holds the context during this call.
    let gl = unsafe { get_internal_gl() };
    gl.quad_context.texture_set_wrap(id, TextureWrap::Repeat, TextureWrap::Repeat);
    gl.quad_context.texture_generate_mipmaps(id);
    gl.quad_context
        .texture_set_min_filter(id, FilterMode::Linear, MipmapFilterMode::Linear);
    Ok(texture)
}

/// `triangles` (in render vertex indices) grouped by the object of their first particle
/// (`particle_triangles` are the same triangles in particle indices, `slots` each particle's
/// material slot), in object order, each group in triangle order.
fn triangles_by_object(triangles: &[[u32; 3]], particle_triangles: &[[u32; 3]], slots: &[u16]) -> Vec<(usize, Vec<[u32; 3]>)> {
    let mut groups: Vec<(usize, Vec<[u32; 3]>)> = Vec::new();
    let mut order: Vec<usize> = (0..triangles.len()).collect();
    let slot = |t: usize| slots.get(particle_triangles[t][0] as usize).map_or(0, |&s| s as usize);
    order.sort_by_key(|&t| slot(t));
    for t in order {
        match groups.last_mut() {
            Some((object, group)) if *object == slot(t) => group.push(triangles[t]),
            _ => groups.push((slot(t), vec![triangles[t]])),
        }
    }
    groups
}

/// One mesh per chunk with its indices and room for its vertices (filled every frame).
fn chunk_meshes(chunks: &[Chunk]) -> Vec<Mesh> {
    chunks
        .iter()
        .map(|c| Mesh {
            vertices: Vec::with_capacity(c.globals.len()),
            indices: c.indices.clone(),
            texture: None,
        })
        .collect()
}

/// `p` moved toward `eye` by [`WIRE_LIFT`] of the distance: the same pixel, nearer the eye.
pub fn lift_toward(p: Vec3, eye: Vec3) -> Vec3 {
    p + (eye - p) * WIRE_LIFT
}

/// Every seam of `cloth`, lifted toward the `eye` as the wireframe is: each stitch still open
/// (its particles farther apart than [`STITCH_SHUT`]) as its thread, and along the seam a
/// running stitch, a dash over the first [`STITCH_DASH`] of the way from each stitch's
/// midpoint to the next; a broken or cut stitch leaves a gap.
fn draw_stitches(cloth: &Cloth, eye: Vec3) {
    let p = cloth.particles();
    let at = |i: u32| p.position(i as usize);
    for seam in &cloth.model().seams {
        let mut previous: Option<Vec3> = None;
        for stitch in cloth.seam_stitches(seam) {
            let Some([a, b]) = stitch else {
                previous = None;
                continue;
            };
            if at(a).distance(at(b)) > STITCH_SHUT {
                draw_line_3d(lift_toward(at(a), eye), lift_toward(at(b), eye), STITCH);
            }
            let middle = (at(a) + at(b)) / 2.0;
            if let Some(from) = previous {
                let to = from.lerp(middle, STITCH_DASH);
                draw_line_3d(lift_toward(from, eye), lift_toward(to, eye), STITCH);
            }
            previous = Some(middle);
        }
    }
}

/// `mesh` flattened along [`SHADOW_LIGHT`] onto the ground at `height`, in the shadow colour.
fn shadow_mesh(mesh: &Mesh, height: f32) -> Mesh {
    Mesh {
        vertices: mesh
            .vertices
            .iter()
            .map(|v| vertex(shadow_point(v.position, SHADOW_LIGHT, height), Vec3::Y, SHADOW, false))
            .collect(),
        indices: mesh.indices.clone(),
        texture: None,
    }
}

/// Where the shadow of `p` falls on the ground at `height` with the light toward `light`
/// (points at or below the ground stay where they are), lifted by [`SHADOW_LIFT`].
pub fn shadow_point(p: Vec3, light: Vec3, height: f32) -> Vec3 {
    let above = (p.y - height).max(0.0);
    let light = light.normalize();
    let on_ground = p - light * (above / light.y.max(1e-3));
    Vec3::new(on_ground.x, height + SHADOW_LIFT, on_ground.z)
}

/// Bounds of the cloth and every finite collider (the ground is unbounded and left out).
pub fn scene_bounds(cloth: &Cloth) -> Option<Bounds> {
    let cloth_bounds = Bounds::of(cloth.particles().positions());
    let mut bounds = cloth
        .colliders()
        .iter()
        .filter_map(collider_bounds)
        .fold(cloth_bounds, |acc, b| match acc {
            Some(a) => Some(a.union(b)),
            None => Some(b),
        })?;
    // Down to the ground, where whatever falls lands (a ball dropped from a height).
    for collider in cloth.colliders() {
        if let Collider::Ground { height, .. } = *collider {
            bounds.min.y = bounds.min.y.min(height);
        }
    }
    Some(bounds)
}

fn collider_bounds(c: &Collider) -> Option<Bounds> {
    match *c {
        Collider::Ground { .. } => None,
        Collider::Sphere { center, radius, .. } => Some(Bounds {
            min: center - Vec3::splat(radius),
            max: center + Vec3::splat(radius),
        }),
        Collider::Capsule { a, b, radius, .. } => Some(Bounds {
            min: a.min(b) - Vec3::splat(radius),
            max: a.max(b) + Vec3::splat(radius),
        }),
        Collider::Box { center, half_extents, .. } => {
            let r = Vec3::splat(half_extents.length());
            Some(Bounds {
                min: center - r,
                max: center + r,
            })
        }
        Collider::Mesh { position, ref shape, .. } => {
            let (low, high) = shape.0.as_ref()?.bounds();
            let rotation = c.rotation();
            let corners = (0..8).map(|k| {
                let pick = |bit: usize, lo: f32, hi: f32| if k & bit == 0 { lo } else { hi };
                position + rotation * Vec3::new(pick(1, low.x, high.x), pick(2, low.y, high.y), pick(4, low.z, high.z))
            });
            let (min, max) = corners.fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), p| (lo.min(p), hi.max(p)));
            Some(Bounds { min, max })
        }
    }
}

/// Each triangle edge once, as (low, high) index pairs.
fn unique_edges(triangles: &[[u32; 3]]) -> Vec<[u32; 2]> {
    let mut edges: Vec<[u32; 2]> = triangles
        .iter()
        .flat_map(|&[a, b, c]| [[a, b], [b, c], [c, a]])
        .map(|[a, b]| [a.min(b), a.max(b)])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Centre and half size of the drawn ground square: generous around the scene, in 0.5 m steps.
fn ground_extent(bounds: Bounds) -> (Vec3, f32) {
    let center = (bounds.min + bounds.max) * 0.5;
    let half = ((bounds.max - bounds.min).length() * 1.5).max(2.0);
    let half = (half / 0.5).ceil() * 0.5;
    (Vec3::new((center.x / 0.5).round() * 0.5, 0.0, (center.z / 0.5).round() * 0.5), half)
}

fn ground_mesh(height: f32, bounds: Bounds) -> Mesh {
    let (center, half) = ground_extent(bounds);
    let corner = |dx: f32, dz: f32| {
        vertex(
            Vec3::new(center.x + dx * half, height, center.z + dz * half),
            Vec3::Y,
            GROUND,
            false,
        )
    };
    Mesh {
        vertices: vec![corner(-1.0, -1.0), corner(-1.0, 1.0), corner(1.0, 1.0), corner(1.0, -1.0)],
        indices: vec![0, 1, 2, 0, 2, 3],
        texture: None,
    }
}

/// The lit meshes of `color` for a finite collider: one for a shape, as many chunks as a
/// draw call needs for a mesh collider, none for the ground (drawn separately).
fn collider_meshes(c: &Collider, color: Color, looks: &[MeshLook]) -> Vec<Mesh> {
    match c {
        Collider::Mesh { position, shape, .. } => {
            MeshLook::of(looks, shape).map_or_else(Vec::new, |look| look.placed(*position, c.rotation(), color))
        }
        _ => collider_mesh(c, color).into_iter().collect(),
    }
}

/// Faces of a mesh collider meeting at a sharper angle than about 40° (the cosine) keep their
/// own normals along the edge: a table's rim and a leg's corners stay crisp.
const CREASE_COS: f32 = 0.77;

/// A point's bits, to find the corners of a triangle soup that are the same point.
fn point_key(p: Vec3) -> [u32; 3] {
    p.to_array().map(f32::to_bits)
}

/// An edge of a mesh collider (its ends, in the collider's frame) and the normals of the
/// triangles along it (one on the mesh's border).
type OutlineEdge = ([Vec3; 2], Vec<Vec3>);

/// A mesh collider's look in its own frame, made once per shape (a collider dragged or on a
/// path only moves it): smooth shaded but for its creases — each corner's normal is the
/// area-weighted sum of the normals of the triangles at its point within [`CREASE_COS`] of its
/// own, and corners with the same point and normal share a vertex — in draw-call chunks, and
/// the edges that outline it.
struct MeshLook {
    /// The shape it is the look of, held so that its identity cannot be taken by another.
    shape: Arc<MeshShape>,
    points: Vec<Vec3>,
    normals: Vec<Vec3>,
    chunks: Vec<Chunk>,
    edges: Vec<OutlineEdge>,
}

impl MeshLook {
    fn new(shape: &Arc<MeshShape>) -> Self {
        let face = |[a, b, c]: &[Vec3; 3]| (*b - *a).cross(*c - *a);
        let mut faces_at: HashMap<[u32; 3], Vec<Vec3>> = HashMap::new();
        for corners in shape.triangles() {
            corners
                .iter()
                .for_each(|&p| faces_at.entry(point_key(p)).or_default().push(face(corners)));
        }
        let mut index_of: HashMap<([u32; 3], [u32; 3]), u32> = HashMap::new();
        let (mut points, mut normals) = (Vec::new(), Vec::new());
        let triangles: Vec<[u32; 3]> = shape
            .triangles()
            .iter()
            .map(|corners| {
                let own = face(corners).normalize_or_zero();
                corners.map(|p| {
                    let smooth: Vec3 = faces_at[&point_key(p)]
                        .iter()
                        .filter(|n| n.normalize_or_zero().dot(own) >= CREASE_COS)
                        .sum();
                    let normal = smooth.normalize_or_zero();
                    *index_of.entry((point_key(p), point_key(normal))).or_insert_with(|| {
                        points.push(p);
                        normals.push(normal);
                        points.len() as u32 - 1
                    })
                })
            })
            .collect();
        Self {
            shape: Arc::clone(shape),
            chunks: chunk_triangles(&triangles, points.len(), CHUNK_VERTICES, CHUNK_INDICES),
            points,
            normals,
            edges: mesh_edges(shape),
        }
    }

    /// The look of `shape` among `looks`, if it has one.
    fn of<'a>(looks: &'a [MeshLook], shape: &LoadedShape) -> Option<&'a MeshLook> {
        let shape = shape.0.as_ref()?;
        looks.iter().find(|look| Arc::ptr_eq(&look.shape, shape))
    }

    /// The meshes placed by `rotation` then `position`, in `color`.
    fn placed(&self, position: Vec3, rotation: Quat, color: Color) -> Vec<Mesh> {
        let corner = |g: u32| {
            vertex(
                position + rotation * self.points[g as usize],
                rotation * self.normals[g as usize],
                color,
                false,
            )
        };
        self.chunks
            .iter()
            .map(|chunk| Mesh {
                vertices: chunk.globals.iter().map(|&g| corner(g)).collect(),
                indices: chunk.indices.clone(),
                texture: None,
            })
            .collect()
    }
}

/// A mesh collider's edges, each once, to outline it with.
fn mesh_edges(shape: &MeshShape) -> Vec<OutlineEdge> {
    let mut faces_along: HashMap<([u32; 3], [u32; 3]), OutlineEdge> = HashMap::new();
    for corners in shape.triangles() {
        let normal = (corners[1] - corners[0]).cross(corners[2] - corners[0]).normalize_or_zero();
        for k in 0..3 {
            let (a, b) = (corners[k], corners[(k + 1) % 3]);
            let key = if point_key(a) <= point_key(b) {
                (point_key(a), point_key(b))
            } else {
                (point_key(b), point_key(a))
            };
            faces_along.entry(key).or_insert_with(|| ([a, b], Vec::new())).1.push(normal);
        }
    }
    let mut edges: Vec<_> = faces_along.into_values().collect();
    // A fixed order, so the outline is drawn the same every frame.
    edges.sort_by(|x, y| {
        point_key(x.0[0])
            .cmp(&point_key(y.0[0]))
            .then(point_key(x.0[1]).cmp(&point_key(y.0[1])))
    });
    edges
}

/// [`Renderer::draw_collider_outline`] for a mesh of outline edges `edges` placed by
/// `rotation` then `position`: its borders, creases and silhouette as seen now.
fn draw_mesh_outline(edges: &[OutlineEdge], position: Vec3, rotation: Quat, camera: &OrbitCamera, viewport: Viewport) {
    let eye = rotation.inverse() * (camera.eye() - position);
    let pixel = |p: Vec3| {
        camera
            .project(position + rotation * p, viewport.size)
            .map(|px| px + viewport.origin)
    };
    let color = Color { a: 0.6, ..SOLID_HOVER };
    for ([a, b], _) in edges.iter().filter(|(ends, normals)| outlines(normals, ends[0], eye)) {
        if let (Some(a), Some(b)) = (pixel(*a), pixel(*b)) {
            draw_line(a.x, a.y, b.x, b.y, 1.5, color);
        }
    }
}

/// Whether the edge with the triangle normals `normals` (the collider's frame) belongs to the
/// outline seen from `eye` (same frame) at its point `at`: a border, a crease, or the
/// silhouette (one triangle faces the eye, the other away).
fn outlines(normals: &[Vec3], at: Vec3, eye: Vec3) -> bool {
    let [n, m] = normals else { return true };
    let facing = |n: &Vec3| n.dot(eye - at) > 0.0;
    n.dot(*m) < CREASE_COS || facing(n) != facing(m)
}

/// A lit mesh of `color` for an analytic collider (None for the ground, which is drawn
/// separately, and for a mesh: [`MeshLook`]).
fn collider_mesh(c: &Collider, color: Color) -> Option<Mesh> {
    match *c {
        Collider::Ground { .. } | Collider::Mesh { .. } => None,
        Collider::Sphere { center, radius, .. } => Some(round_mesh(center, Quat::IDENTITY, radius, 0.0, color)),
        Collider::Capsule { a, b, radius, .. } => {
            let axis = b - a;
            let rotation = Quat::from_rotation_arc(Vec3::Y, axis.try_normalize().unwrap_or(Vec3::Y));
            Some(round_mesh((a + b) * 0.5, rotation, radius, axis.length() * 0.5, color))
        }
        Collider::Box {
            center,
            half_extents,
            rotation_degrees,
            ..
        } => Some(box_mesh(center, half_extents, rotation_degrees, color)),
    }
}

/// A UV sphere of `radius` whose upper half is shifted by +`half_length` and lower half by
/// −`half_length` along the local y axis (a capsule; a sphere for 0), placed by `rotation` and
/// `center`, in `color`.
fn round_mesh(center: Vec3, rotation: Quat, radius: f32, half_length: f32, color: Color) -> Mesh {
    const RINGS: u16 = 16; // even, so the equator is duplicated into both halves
    const SEGMENTS: u16 = 28;
    let mut vertices = Vec::new();
    for ring in 0..=RINGS + 1 {
        // Rings 0..=RINGS/2 are the upper cap, the rest the lower one (equator twice).
        let (k, shift) = if ring <= RINGS / 2 {
            (ring, half_length)
        } else {
            (ring - 1, -half_length)
        };
        let theta = std::f32::consts::PI * k as f32 / RINGS as f32;
        for s in 0..=SEGMENTS {
            let phi = std::f32::consts::TAU * s as f32 / SEGMENTS as f32;
            let n = Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin());
            let p = center + rotation * (n * radius + Vec3::Y * shift);
            vertices.push(vertex(p, rotation * n, color, false));
        }
    }
    let row = SEGMENTS + 1;
    let mut indices = Vec::new();
    for ring in 0..=RINGS {
        for s in 0..SEGMENTS {
            let (a, b) = (ring * row + s, (ring + 1) * row + s);
            // Counter-clockwise seen from outside, so gl_FrontFacing marks the outer side.
            indices.extend_from_slice(&[a, a + 1, b, a + 1, b + 1, b]);
        }
    }
    Mesh {
        vertices,
        indices,
        texture: None,
    }
}

fn box_mesh(center: Vec3, half: Vec3, rotation_degrees: Vec3, color: Color) -> Mesh {
    // Same rotation convention as the engine's collider (Euler XYZ in degrees).
    let r = rotation_degrees;
    let rotation = Quat::from_euler(EulerRot::XYZ, r.x.to_radians(), r.y.to_radians(), r.z.to_radians());
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
        for sign in [1.0f32, -1.0] {
            let n = axis * sign;
            let (u, v) = (n.any_orthonormal_vector(), n.cross(n.any_orthonormal_vector()));
            let base = vertices.len() as u16;
            for (du, dv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let local = (n + u * du + v * dv) * half;
                vertices.push(vertex(center + rotation * local, rotation * n, color, false));
            }
            indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    Mesh {
        vertices,
        indices,
        texture: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drape::sim::GridSpec;

    fn grid(n: u32) -> Vec<[u32; 3]> {
        let spec = GridSpec {
            columns: n,
            rows: n,
            bending: false,
            shear: false,
            ..GridSpec::default()
        };
        spec.build().unwrap().triangles
    }

    #[test]
    fn a_256_grid_is_split_into_chunks_that_fit_a_draw_call() {
        let triangles = grid(256);
        let chunks = chunk_triangles(&triangles, 256 * 256, CHUNK_VERTICES, CHUNK_INDICES);
        assert!(chunks.len() >= 2);
        let mut rebuilt = Vec::new();
        for c in &chunks {
            assert!(c.globals.len() <= CHUNK_VERTICES && c.globals.len() < DRAW_CALL_VERTICES);
            assert!(c.indices.len() <= CHUNK_INDICES && c.indices.len() < DRAW_CALL_INDICES);
            rebuilt.extend(c.indices.chunks(3).map(|t| [0, 1, 2].map(|k| c.globals[t[k] as usize])));
        }
        assert_eq!(rebuilt, triangles, "every triangle drawn once, in order, with its own corners");
    }

    #[test]
    fn small_limits_force_many_chunks_without_losing_triangles() {
        let triangles = grid(20);
        let chunks = chunk_triangles(&triangles, 400, 50, 90);
        assert!(chunks.iter().all(|c| c.globals.len() <= 50 && c.indices.len() <= 90));
        assert_eq!(chunks.iter().map(|c| c.indices.len()).sum::<usize>(), triangles.len() * 3);
    }

    #[test]
    fn heat_ramp_runs_blue_to_red_and_clamps() {
        let (cold, hot) = (heat_color(-1.0), heat_color(2.0));
        assert_eq!(cold, heat_color(0.0));
        assert_eq!(hot, heat_color(1.0));
        assert!(cold.b > cold.r && hot.r > hot.b);
    }

    /// Every triangle of a collider mesh must wind counter-clockwise seen from outside (its
    /// geometric normal agrees with the vertex normals), or the shader lights the inside.
    #[test]
    fn collider_meshes_wind_outward() {
        let colliders = [
            Collider::Sphere {
                center: Vec3::new(0.2, 1.0, -0.3),
                radius: 0.5,
                motion: None,
            },
            Collider::Capsule {
                a: Vec3::new(-0.5, 0.2, 0.0),
                b: Vec3::new(0.4, 0.9, 0.3),
                radius: 0.2,
                motion: None,
            },
            Collider::Box {
                center: Vec3::ZERO,
                half_extents: Vec3::new(0.3, 0.5, 0.2),
                rotation_degrees: Vec3::new(10.0, 30.0, -20.0),
                motion: None,
            },
        ];
        for collider in &colliders {
            let mesh = collider_mesh(collider, SOLID).unwrap();
            for t in mesh.indices.chunks(3) {
                let [a, b, c] = [0, 1, 2].map(|k| mesh.vertices[t[k] as usize]);
                let face = (b.position - a.position).cross(c.position - a.position);
                if face.length() < 1e-6 {
                    continue; // the poles' degenerate slivers
                }
                let normal = a.normal.truncate() + b.normal.truncate() + c.normal.truncate();
                assert!(face.dot(normal) > 0.0, "{collider:?}: triangle {t:?} winds inward");
            }
        }
    }

    /// A mesh collider's look: a cube keeps a face's own normal at each of its corners (its
    /// edges are creases), an icosphere is smooth (each vertex shared by its five or six
    /// triangles), and placing the look moves and turns both points and normals.
    #[test]
    fn mesh_looks_keep_creases_and_are_placed_by_the_pose() {
        let cube: Vec<Vec3> = (0..8)
            .map(|k| Vec3::new((k & 1) as f32, (k >> 1 & 1) as f32, (k >> 2 & 1) as f32) - 0.5)
            .collect();
        let quads = [[0, 4, 6, 2], [1, 3, 7, 5], [0, 1, 5, 4], [2, 6, 7, 3], [0, 2, 3, 1], [4, 5, 7, 6]];
        let triangles: Vec<[u32; 3]> = quads.iter().flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]]).collect();
        let shape = Arc::new(MeshShape::new(&cube, &triangles).unwrap());
        let look = MeshLook::new(&shape);
        assert_eq!(look.points.len(), 24, "four vertices per face of a cube");
        let turn = Quat::from_rotation_y(0.7);
        let placed = look.placed(Vec3::new(1.0, 2.0, 3.0), turn, SOLID);
        for mesh in &placed {
            for t in mesh.indices.chunks(3) {
                let [a, b, c] = [0, 1, 2].map(|k| mesh.vertices[t[k] as usize]);
                let face = (b.position - a.position).cross(c.position - a.position).normalize();
                for v in [a, b, c] {
                    assert!(face.dot(v.normal.truncate()) > 0.9999, "a crease is kept and turned with the cube");
                    assert!(
                        (v.position - Vec3::new(1.0, 2.0, 3.0)).length() < 0.87,
                        "placed around the position"
                    );
                }
            }
        }
        let ball = drape::sim::icosphere(Vec3::ZERO, 0.3, 2).build().unwrap();
        let smooth = MeshLook::new(&Arc::new(MeshShape::new(&ball.positions, &ball.triangles).unwrap()));
        assert_eq!(smooth.points.len(), ball.positions.len(), "a smooth ball shares its vertices");
        assert!(smooth.points.iter().zip(&smooth.normals).all(|(p, n)| p.normalize().dot(*n) > 0.99));
    }

    /// Issue 19: the wireframe fought the surface for depth. A lifted line end must stay on
    /// the same view ray (same pixel) and come nearer the eye by a margin far above the depth
    /// buffer's resolution there.
    #[test]
    fn lifted_wire_ends_keep_their_pixel_and_come_nearer() {
        let camera = OrbitCamera {
            target: Vec3::new(0.0, 1.5, 0.0),
            yaw: 0.5,
            pitch: 0.3,
            distance: 3.0,
        };
        let screen = glam::Vec2::new(1000.0, 700.0);
        let eye = camera.eye();
        for p in [Vec3::new(0.0, 1.5, 0.0), Vec3::new(-0.8, 2.3, 0.1), Vec3::new(0.7, 1.0, -0.2)] {
            let lifted = lift_toward(p, eye);
            let (a, b) = (camera.project(p, screen).unwrap(), camera.project(lifted, screen).unwrap());
            assert!(a.distance(b) < 1e-2, "{a} vs {b}");
            let nearer = eye.distance(p) - eye.distance(lifted);
            // 24-bit depth at 3 m with a 1 cm near plane resolves about 0.05 mm.
            assert!(nearer > 5e-3, "{nearer}");
        }
    }

    /// Issue 35 item 6: the shadow of a point 2 m up falls within 0.7 m of its foot, on the
    /// key light's side.
    #[test]
    fn a_tall_sheets_shadow_falls_near_it_away_from_the_key_light() {
        let p = Vec3::new(0.0, 2.0, 0.0);
        let s = shadow_point(p, SHADOW_LIGHT, 0.0);
        let offset = Vec3::new(s.x, 0.0, s.z);
        assert!(offset.length() < 0.7, "{offset}");
        let away = -Vec3::new(KEY_LIGHT.x, 0.0, KEY_LIGHT.z).normalize();
        assert!(offset.normalize().dot(away) > 0.999, "{offset}");
    }

    #[test]
    fn shadows_fall_along_the_light_onto_the_ground() {
        let light = Vec3::new(-0.4, 1.0, 0.5);
        let p = Vec3::new(0.2, 2.0, 0.0);
        let s = shadow_point(p, light, 0.0);
        assert!((s.y - SHADOW_LIFT).abs() < 1e-6);
        // The shadow lies on the line through p along the light: offset ∝ height.
        let expected = p - light * (2.0 / light.y);
        assert!((s.x - expected.x).abs() < 1e-5 && (s.z - expected.z).abs() < 1e-5, "{s}");
        // Cloth lying on the ground casts its shadow right under it.
        let resting = shadow_point(Vec3::new(0.3, 0.0, 0.4), light, 0.0);
        assert!((resting.x - 0.3).abs() < 1e-6 && (resting.z - 0.4).abs() < 1e-6);
    }

    #[test]
    fn unique_edges_of_a_quad_are_five() {
        assert_eq!(unique_edges(&[[0, 1, 2], [2, 1, 3]]), vec![[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]]);
    }

    #[test]
    fn triangles_are_grouped_by_their_object_in_order() {
        let triangles = [[0, 1, 2], [3, 4, 5], [1, 2, 6]];
        let slots = [0, 0, 0, 1, 1, 1, 0];
        let groups = triangles_by_object(&triangles, &triangles, &slots);
        assert_eq!(groups, vec![(0, vec![[0, 1, 2], [1, 2, 6]]), (1, vec![[3, 4, 5]])]);
    }
}
