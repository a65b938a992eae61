-- Shared by every dataset: trigram search, and the schemas owned by ingest and access.
-- Read models live in one schema per dataset (see ../dataset/).
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
CREATE SCHEMA IF NOT EXISTS ingest;
CREATE SCHEMA IF NOT EXISTS access;
