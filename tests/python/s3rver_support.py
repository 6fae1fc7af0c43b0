"""The s3rver of tests/s3rver/run-with-s3rver.sh, for the Python tests: its AWS environment and an
uploader of local trial folders (boto3). Bucket: smdebug-test."""
import contextlib
import os
from pathlib import Path

BUCKET = "smdebug-test"


@contextlib.contextmanager
def s3rver_environment():
    """Sets the AWS environment of the local s3rver for the block (and restores it); yields
    upload(local_dir, url), which copies a folder's files under s3://smdebug-test/<key prefix>."""
    endpoint = os.environ.get("SMDEBUG_S3RVER_ENDPOINT")
    assert endpoint, "run under tests/s3rver/run-with-s3rver.sh (SMDEBUG_S3RVER_ENDPOINT)"
    import boto3

    env = {"AWS_ACCESS_KEY_ID": "S3RVER", "AWS_SECRET_ACCESS_KEY": "S3RVER", "AWS_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": endpoint}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="S3RVER",
                      aws_secret_access_key="S3RVER")

    def upload(local_dir, url):
        key_prefix = url[len(f"s3://{BUCKET}/"):]
        for f in Path(local_dir).rglob("*"):
            if f.is_file():
                s3.upload_file(str(f), BUCKET, f"{key_prefix}/{f.relative_to(local_dir).as_posix()}")

    try:
        yield upload
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
