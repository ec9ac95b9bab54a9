"""Checks a .usda file Drape wrote with OpenUSD itself (the usd-core package).

Usage: python3 tests/usd_check.py FILE.usda EXPECTED.json

EXPECTED.json is written by tests/drape/usd_export.rs from the simulation: the frame rate,
the frame count, every cloth mesh prim with its span of frames, point and face counts, whether
it has texture coordinates, and some points' f32 bits on some frames, the moving sphere's centres, and the capsule's and box's
poses. Exits 0 when the stage agrees, 1 with the disagreements listed otherwise.
"""

import json
import struct
import sys

from pxr import Gf, Usd, UsdGeom

# The world-space capsule ends and box corner are products of a matrix computed in double from
# the written f32 values with a pose that Rust computes in f32 over a few operations: a few
# ulps of 1 m (1.2e-7 each) apart.
POSE_TOLERANCE_M = 1e-6

problems = []


def check(condition, message):
    if not condition:
        problems.append(message)


def f32_bits(values):
    """The f32 bit patterns of a float3 read from the stage."""
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in values]


def check_stage(stage, expected):
    fps = expected["frames_per_second"]
    check(stage.GetTimeCodesPerSecond() == fps, f"timeCodesPerSecond {stage.GetTimeCodesPerSecond()} != {fps}")
    check(stage.GetFramesPerSecond() == fps, f"framesPerSecond {stage.GetFramesPerSecond()} != {fps}")
    check(stage.GetStartTimeCode() == 0, f"startTimeCode {stage.GetStartTimeCode()}")
    last = expected["frames"] - 1
    check(stage.GetEndTimeCode() == last, f"endTimeCode {stage.GetEndTimeCode()} != {last}")
    check(UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y, f"upAxis {UsdGeom.GetStageUpAxis(stage)}")
    check(UsdGeom.GetStageMetersPerUnit(stage) == 1.0, f"metersPerUnit {UsdGeom.GetStageMetersPerUnit(stage)}")
    check(stage.GetDefaultPrim().GetPath() == "/Drape", f"defaultPrim {stage.GetDefaultPrim().GetPath()}")


def check_visibility(prim, first, end, frames):
    path = prim.GetPath()
    imageable = UsdGeom.Imageable(prim)
    shown = [t for t in range(frames) if imageable.ComputeVisibility(t) == UsdGeom.Tokens.inherited]
    check(shown == list(range(first, end)), f"{path}: visible on {shown}, expected {first}..{end - 1}")


def check_faces_face_their_normals(mesh, time):
    """Right-handed faces: each face's (p1 - p0) x (p2 - p0) points along its corners' normals."""
    points = mesh.GetPointsAttr().Get(time)
    normals = mesh.GetNormalsAttr().Get(time)
    indices = mesh.GetFaceVertexIndicesAttr().Get()
    for f in range(len(indices) // 3):
        a, b, c = indices[3 * f : 3 * f + 3]
        face = Gf.Cross(Gf.Vec3d(points[b] - points[a]), Gf.Vec3d(points[c] - points[a]))
        corners = Gf.Vec3d(normals[a] + normals[b] + normals[c])
        if Gf.Dot(face, corners) <= 0:
            problems.append(f"{mesh.GetPath()}: face {f} at {time} faces away from its normals")
            return


def check_cloth_mesh(stage, spec, frames):
    path = spec["path"]
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath(path))
    if not mesh:
        problems.append(f"{path}: no Mesh")
        return
    span = list(range(spec["first"], spec["end"]))
    for attribute in (mesh.GetPointsAttr(), mesh.GetNormalsAttr(), mesh.GetExtentAttr()):
        times = [int(t) for t in attribute.GetTimeSamples()]
        check(times == span, f"{path}.{attribute.GetName()}: samples at {times}, expected {span}")
    check(mesh.GetNormalsInterpolation() == UsdGeom.Tokens.vertex, f"{path}: normals {mesh.GetNormalsInterpolation()}")
    check(mesh.GetSubdivisionSchemeAttr().Get() == UsdGeom.Tokens.none, f"{path}: subdivided")
    check(mesh.GetOrientationAttr().Get() == UsdGeom.Tokens.rightHanded, f"{path}: left-handed")
    counts = mesh.GetFaceVertexCountsAttr().Get()
    check(list(counts) == [3] * spec["faces"], f"{path}: {len(counts)} faces, expected {spec['faces']} triangles")
    for t in (spec["first"], spec["end"] - 1):
        n = len(mesh.GetPointsAttr().Get(t))
        check(n == spec["points"], f"{path}: {n} points at {t}, expected {spec['points']}")
    for point in spec["points_at"]:
        got = f32_bits(mesh.GetPointsAttr().Get(point["frame"])[point["index"]])
        check(got == point["bits"], f"{path}: point {point['index']} at {point['frame']}: bits {got} != {point['bits']}")
    st = UsdGeom.PrimvarsAPI(mesh.GetPrim()).GetPrimvar("st")
    check(bool(st) == spec["uvs"], f"{path}: st {'missing' if spec['uvs'] else 'written'}")
    if st:
        check(st.GetInterpolation() == UsdGeom.Tokens.faceVarying, f"{path}: st {st.GetInterpolation()}")
        check(len(st.Get()) == 3 * spec["faces"], f"{path}: {len(st.Get())} st for {spec['faces']} triangles")
    check_visibility(mesh.GetPrim(), spec["first"], spec["end"], frames)
    if spec["flat_at"] is not None:
        check_faces_face_their_normals(mesh, spec["flat_at"])


def check_translations(stage, expected):
    for sample in expected["translations"]:
        prim = stage.GetPrimAtPath(sample["path"])
        ops = UsdGeom.Xformable(prim).GetOrderedXformOps()
        translate = [op for op in ops if op.GetOpType() == UsdGeom.XformOp.TypeTranslate]
        if len(translate) != 1:
            problems.append(f"{sample['path']}: {len(translate)} translate ops")
            continue
        got = f32_bits(translate[0].Get(sample["frame"]))
        check(got == sample["bits"], f"{sample['path']}: translate at {sample['frame']}: {got} != {sample['bits']}")


def check_pose(stage, pose):
    """`pose["local"]` points of the shape land on `pose["world"]` at `pose["frame"]`."""
    prim = stage.GetPrimAtPath(pose["path"])
    check(prim.GetTypeName() == pose["type"], f"{pose['path']}: a {prim.GetTypeName()}, expected a {pose['type']}")
    matrix = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(pose["frame"])
    for local, world in zip(pose["local"], pose["world"]):
        got = matrix.Transform(Gf.Vec3d(*local))
        off = max(abs(got[k] - world[k]) for k in range(3))
        check(off <= POSE_TOLERANCE_M, f"{pose['path']}: {local} -> {list(got)}, expected {world}")
    for name, value in pose["attributes"].items():
        got = prim.GetAttribute(name).Get(pose["frame"])
        check(got == value, f"{pose['path']}.{name} = {got}, expected {value}")


def main():
    stage = Usd.Stage.Open(sys.argv[1])
    with open(sys.argv[2]) as f:
        expected = json.load(f)
    check_stage(stage, expected)
    meshes = sorted(str(p.GetPath()) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh))
    listed = sorted([m["path"] for m in expected["meshes"]] + [expected["ground"]])
    check(meshes == listed, f"meshes {meshes}, expected {listed}")
    for spec in expected["meshes"]:
        check_cloth_mesh(stage, spec, expected["frames"])
    check_translations(stage, expected)
    for pose in expected["poses"]:
        check_pose(stage, pose)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
    print(f"OpenUSD {Usd.GetVersion()}: {len(meshes)} meshes, {expected['frames']} frames checked")


main()
